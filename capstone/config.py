"""Every knob of the capstone, in one torch-free module.

Each stage reads its settings from one of these dataclasses, and the CLI builds its options from
them (name, type, default and help), so a default is written exactly once. Importing this module
is cheap: the UI and `--help` never pay for torch.

    GPTConfig       the model's shape                              model.py     (module 32)
    TrainConfig     the optimizer, schedule and checkpoints        train.py     (module 33)
    EvalConfig      how validation is scored                       evaluate.py  (module 34)
    SamplingConfig  how the next token is chosen                   generate.py  (module 35)
    LoRAConfig      the adapter and its fine-tuning run            lora.py      (module 36)
"""

from __future__ import annotations

from dataclasses import dataclass, field


def _help(text: str, default):
    return field(default=default, metadata={"help": text})


@dataclass
class GPTConfig:
    vocab_size: int = _help("token ids the model reads and predicts", 512)
    context: int = _help("sequence length: the longest sequence the position table covers", 128)
    d_model: int = _help("width of the residual stream", 128)
    n_layer: int = _help("transformer blocks", 4)
    n_head: int = _help("attention heads (d_model must split evenly)", 4)
    dropout: float = _help("dropout probability", 0.0)
    bias: bool = _help("biases in the Linears and LayerNorms", True)


# The recipe measured in capstone/README.md is the defaults plus dropout 0.1: with 875k
# parameters and about 200k training tokens the model memorises the training text within a
# few hundred steps, and dropout is what lets a longer run keep improving on validation.
RECIPE_DROPOUT = 0.1


@dataclass
class TrainConfig:
    steps: int = _help("total optimizer steps; the schedule's length", 1600)
    batch_size: int = _help("windows per step", 32)
    lr: float = _help("peak learning rate", 2e-3)
    min_lr: float = _help("final learning rate of the cosine", 2e-4)
    warmup_steps: int = _help("linear warmup steps", 100)
    weight_decay: float = _help("AdamW decay on matrices", 0.1)
    beta1: float = _help("AdamW beta1", 0.9)
    # shorter memory than 0.999: tiny batches, short run (nanoGPT's choice too)
    beta2: float = _help("AdamW beta2", 0.99)
    grad_clip: float = _help("max gradient norm", 1.0)
    seed: int = _help("seed for init, batches and dropout", 1337)
    log_every: int = _help("steps between progress lines", 50)
    eval_every: int = _help("add a quick val estimate to progress lines at multiples of this, 0 = never", 250)
    checkpoint_every: int = _help("steps between checkpoints", 500)


@dataclass
class EvalConfig:
    stride: int = _help("sliding-window stride: each window scores its last `stride` targets", 64)
    batch_size: int = _help("windows per forward pass", 32)


@dataclass
class SamplingConfig:
    tokens: int = _help("tokens to generate", 200)
    temperature: float = _help("0 = greedy; below 1 sharpens, above 1 flattens", 0.8)
    top_k: int = _help("keep the k likeliest tokens, 0 = all", 40)
    top_p: float = _help("keep the smallest set of likeliest tokens whose probability reaches p, 1 = all", 1.0)
    seed: int = _help("sampling seed: same seed, same text", 0)

    def problem(self) -> str | None:
        """What is wrong with these settings, in one line, or None."""
        if self.tokens < 0:
            return f"tokens must be >= 0, got {self.tokens}"
        if self.temperature < 0:
            return f"temperature must be >= 0, got {self.temperature}"
        if self.top_k < 0:
            return f"top_k must be >= 0 (0 = all), got {self.top_k}"
        if not 0 < self.top_p <= 1:
            return f"top_p must be in (0, 1], got {self.top_p}"
        return None


@dataclass
class LoRAConfig:
    rank: int = _help("LoRA rank r (8: 45,056 parameters on the course model)", 8)
    alpha: float = _help("scale numerator: the update is (alpha / r) B A", 16.0)
    steps: int = _help("optimizer steps", 200)
    batch_size: int = _help("windows per step", 16)
    lr: float = _help("AdamW learning rate", 2e-3)
    holdout: float = _help("tail share of the validation split kept for scoring", 0.25)
    seed: int = _help("seed for the adapter init and the batches", 0)
