"""A whole capstone workspace in seconds: for drills and tests that run the real stages.

`tiny_workspace` runs the real `corpus`, `tokenize` and `train` stages on the first bytes of the
default corpus with a small vocabulary and a small model, so `evaluate`, `finetune`, `export`,
`quantize` and `serve` can run on it for real. The figures it gives are not the course's (the
model is 30x smaller and trains for seconds); the mechanisms are the same.
"""

from __future__ import annotations

from pathlib import Path

from capstone.config import GPTConfig, TrainConfig
from capstone.workspace import Workspace

TINY_MODEL = GPTConfig(vocab_size=320, context=32, d_model=32, n_layer=2, n_head=2)
TINY_TRAINING = TrainConfig(steps=80, batch_size=16, lr=1e-2, min_lr=1e-3, warmup_steps=10,
                            log_every=10_000, eval_every=0, checkpoint_every=0)


def tiny_workspace(root: str | Path, corpus_bytes: int = 40_000, model: GPTConfig = TINY_MODEL,
                   training: TrainConfig = TINY_TRAINING, *, train: bool = True) -> Workspace:
    """corpus -> tokenize -> (train) into `root`, on the default corpus's first `corpus_bytes`."""
    from capstone import corpus, data
    from capstone.train import train as run_training

    ws = Workspace(root)
    ws.root.mkdir(parents=True, exist_ok=True)
    text = corpus.load_default().text[:corpus_bytes]
    cut = text.rfind(b"\n", 0, corpus_bytes)  # whole lines only (no cut UTF-8 character)
    source = ws.root / "tiny_corpus.txt"
    source.write_bytes(text[:cut + 1])
    corpus.build(ws, source)
    data.build(ws, vocab_size=model.vocab_size)
    if train:
        run_training(ws, model, training, log=None)
    return ws
