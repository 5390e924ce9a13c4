"""The capstone: one small GPT built end to end, one module per stage.

    corpus.py   -> the text and a fixed train/validation split      (module 30)
    bpe.py      -> a byte-level BPE tokenizer trained on that text  (module 30)
    data.py     -> token files on disk and the loaders over them    (module 31)
    model.py    -> the GPT itself                                   (module 32)
    train.py    -> CPU pretraining with exact resume                (module 33)
    evaluate.py -> nats per token, bits per byte, baselines         (module 34)
    config.py   -> every knob as a dataclass (torch-free; the CLI's options come from it)
    generate.py -> the one sampling loop, with a KV cache           (module 35)
    sample.py   -> text from a checkpoint, decoded as it streams    (module 35)
    lora.py     -> LoRA fine-tuning, base frozen                    (module 36)
    compiled.py -> torch.compile equality and graph breaks          (module 37)
    distributed.py -> DDP and FSDP2 on gloo vs one process          (module 37)
    export.py, quantize.py, serve.py -> export, int8, streaming     (module 38)
    cli.py      -> `pytorch-tutor capstone <stage>` / `python -m capstone <stage>`

Importing this package is cheap on purpose: it imports neither torch nor numpy, so the
tutor's UI can import `capstone.cli` without paying for torch. Each stage module imports
what it needs.
"""


class CapstoneError(Exception):
    """A mistake the learner can fix (a missing artifact, a bad path). The CLI prints the
    message on one line, without a traceback."""
