"""Module 36: LoRA from scratch.

Fine-tuning every weight of a pretrained model needs a full copy of it per task. LoRA freezes
the pretrained weight W (out x in) and learns a low-rank change instead:

    y = x W^T + b + (alpha / r) * x A^T B^T        A: r x in,  B: out x r,  r << in, out

B starts at zero, so the adapted model starts exactly where the pretrained one is. Rank 8 on
each block's attention `qkv`, attention `proj` and MLP `fc` of the course's GPT:

    qkv  8 x (128 + 384) = 4,096     proj 8 x (128 + 128) = 2,048     fc 8 x (128 + 512) = 5,120
    4 blocks x 11,264 = 45,056 trainable parameters (5.1 % of 875,264); everything else frozen.

`LoRALinear` subclasses nn.Linear and keeps the *same* weight and bias Parameters under the
same names, so a base checkpoint still loads into the adapted model and the adapter is just
the `lora_A` / `lora_B` entries. `merge` folds B A into W for inference (no extra matmuls);
`unmerge` takes it out again.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from capstone import CapstoneError
from capstone.config import LoRAConfig
from capstone.model import GPT
from capstone.workspace import Workspace

TARGETS = ("attn.qkv", "attn.proj", "mlp.fc")


class LoRALinear(nn.Linear):
    def __init__(self, base: nn.Linear, rank: int, alpha: float):
        nn.Module.__init__(self)
        self.in_features, self.out_features = base.in_features, base.out_features
        self.weight, self.bias = base.weight, base.bias  # the same Parameters, frozen
        self.weight.requires_grad_(False)
        if self.bias is not None:
            self.bias.requires_grad_(False)
        self.rank, self.scale, self.merged = rank, alpha / rank, False
        self.lora_A = nn.Parameter(torch.empty(rank, self.in_features))
        self.lora_B = nn.Parameter(torch.zeros(self.out_features, rank))  # zero: starts as the base
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))

    def delta(self) -> torch.Tensor:
        return (self.lora_B @ self.lora_A) * self.scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.linear(x, self.weight, self.bias)
        if self.merged:
            return y
        return y + F.linear(F.linear(x, self.lora_A), self.lora_B) * self.scale

    @torch.no_grad()
    def merge(self) -> None:
        if not self.merged:
            self.weight += self.delta()
            self.merged = True

    @torch.no_grad()
    def unmerge(self) -> None:
        if self.merged:
            self.weight -= self.delta()
            self.merged = False

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, rank={self.rank}, scale={self.scale:g}, merged={self.merged}"


def add_lora(model: GPT, rank: int = 8, alpha: float = 16.0, targets=TARGETS) -> GPT:
    """Freeze every parameter of `model`, wrap the target Linears in place; returns model."""
    for p in model.parameters():
        p.requires_grad_(False)
    for block in model.blocks:
        for target in targets:
            parent_name, name = target.split(".")
            parent = getattr(block, parent_name)
            layer = getattr(parent, name)
            if not isinstance(layer, LoRALinear):
                setattr(parent, name, LoRALinear(layer, rank, alpha))
    return model


def lora_layers(model: nn.Module) -> list[LoRALinear]:
    return [m for m in model.modules() if isinstance(m, LoRALinear)]


def lora_state_dict(model: nn.Module) -> dict[str, torch.Tensor]:
    """Only the adapter: the lora_A / lora_B tensors (187 KB on disk for rank 8, vs 3.5 MB for the model)."""
    return {k: v for k, v in model.state_dict().items() if ".lora_" in k}


def trainable_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def merge(model: nn.Module) -> None:
    for layer in lora_layers(model):
        layer.merge()


def unmerge(model: nn.Module) -> None:
    for layer in lora_layers(model):
        layer.unmerge()


def mean_nll(model: GPT, tokens: np.ndarray) -> float:
    """Mean nats/token over every non-overlapping context window of `tokens` (a slice's loss)."""
    from capstone.train import estimate_val_loss

    if (len(tokens) - 1) // model.config.context == 0:
        raise CapstoneError(f"the slice has {len(tokens)} tokens, fewer than one window of "
                            f"{model.config.context + 1}")
    return estimate_val_loss(model, np.asarray(tokens), max_windows=None)


def finetune(model: GPT, train_tokens: np.ndarray, val_tokens: np.ndarray, steps: int = 200,
             batch_size: int = 16, lr: float = 2e-3, seed: int = 0,
             log: Callable[[str], None] | None = None,
             on_step: Callable[[int, float], bool] | None = None) -> dict:
    """AdamW on the LoRA parameters only (add_lora first), random windows of train_tokens;
    returns nats/token on val_tokens before and after. `on_step(step, loss)` runs after every
    step (a progress bar); returning True stops the fine-tune there (`steps` says how many ran)."""
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise CapstoneError("nothing to train: call add_lora(model) first")
    T = model.config.context
    if len(train_tokens) <= T + 1:
        raise CapstoneError(f"the fine-tuning slice has {len(train_tokens)} tokens; need more than {T + 1}")
    data = torch.from_numpy(np.asarray(train_tokens, dtype=np.int64))
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    before = mean_nll(model, val_tokens)
    model.train()
    loss, done = None, 0
    for step in range(1, steps + 1):
        starts = torch.randint(len(data) - T - 1, (batch_size,), generator=generator)
        x = torch.stack([data[s:s + T] for s in starts.tolist()])
        y = torch.stack([data[s + 1:s + T + 1] for s in starts.tolist()])
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if log and (step % 50 == 0 or step == steps):
            log(f"finetune step {step}/{steps} | loss {loss.item():.4f}")
        done = step
        if on_step and on_step(step, loss.item()):
            break
    model.eval()
    return {"val_before": before, "val_after": mean_nll(model, val_tokens),
            "last_train_loss": None if loss is None else loss.item(),
            "trainable_parameters": trainable_parameters(model), "steps": done}


def finetune_workspace(workspace: Workspace, config: LoRAConfig | None = None,
                       log: Callable[[str], None] | None = None,
                       on_step: Callable[[int, float], bool] | None = None) -> dict:
    """Fine-tune the workspace checkpoint on the validation split's head (text pretraining never
    saw), score on its last `holdout` share; write finetune/lora.pt and finetune/finetune.json."""
    from capstone.data import load_split_tokens
    from capstone.train import load_trained_model
    from capstone.workspace import write_json

    c = config or LoRAConfig()
    if not 0 < c.holdout < 1:
        raise CapstoneError(f"holdout must be between 0 and 1, got {c.holdout}")
    _, val_tokens, _ = load_split_tokens(workspace)
    model, _ = load_trained_model(workspace)
    cut = int(len(val_tokens) * (1 - c.holdout))
    torch.manual_seed(c.seed)
    add_lora(model, c.rank, c.alpha)
    result = finetune(model, val_tokens[:cut], val_tokens[cut:], c.steps, c.batch_size, c.lr, c.seed, log, on_step)
    workspace.adapter.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"rank": c.rank, "alpha": c.alpha, "targets": list(TARGETS),
                "lora": lora_state_dict(model)}, workspace.adapter)
    result |= {"rank": c.rank, "alpha": c.alpha, "finetune_tokens": cut,
               "holdout_tokens": len(val_tokens) - cut, "adapter": str(workspace.adapter)}
    write_json(workspace.finetune_report, result)
    return result


def apply_adapter(model: GPT, adapter: dict) -> GPT:
    """Wrap `model` as the adapter says and load its lora_A / lora_B tensors.

    load_state_dict(strict=False) is needed (the adapter holds no base weights), but on its own
    it would load *nothing* from an adapter whose keys do not match -- a renamed module, a
    `module.` prefix from a wrapper -- and say nothing. So both lists it returns are checked:
    no adapter key may go unused, and every LoRA tensor of the model must be loaded."""
    add_lora(model, adapter["rank"], adapter["alpha"], adapter["targets"])
    missing, unexpected = model.load_state_dict(adapter["lora"], strict=False)
    not_loaded = [k for k in missing if ".lora_" in k]
    if unexpected or not_loaded:
        first = (unexpected or not_loaded)[0]
        raise CapstoneError(
            f"the adapter does not fit the model: {len(unexpected)} of its tensors match no LoRA "
            f"parameter and {len(not_loaded)} LoRA parameters got no tensor (first: {first!r})")
    return model


def load_adapted(workspace: Workspace, merged: bool = True) -> GPT:
    """The workspace checkpoint with its saved LoRA adapter applied (merged by default)."""
    from capstone.train import load_trained_model

    workspace.require(workspace.adapter, made_by="finetune")
    model, _ = load_trained_model(workspace)
    apply_adapter(model, torch.load(workspace.adapter, weights_only=True))
    if merged:
        merge(model)
    return model.eval()
