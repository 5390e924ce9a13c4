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
from capstone.safe_files import load_tensors, save_tensors
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


FINETUNE_FORMAT = "capstone-finetune/1"


class FineTuner:
    """AdamW on the LoRA parameters only (add_lora first), on random windows of `train_tokens`.

    Everything a step depends on -- the adapter, AdamW's moments, the window sampler's generator,
    the global torch RNG that dropout draws from -- is in `state_dict`, so a fine-tune stopped at a
    step boundary and loaded again ends with the same adapter, bit for bit, as one that never stopped."""

    def __init__(self, model: GPT, train_tokens: np.ndarray, steps: int = 200, batch_size: int = 16,
                 lr: float = 2e-3, seed: int = 0):
        self.params = [p for p in model.parameters() if p.requires_grad]
        if not self.params:
            raise CapstoneError("nothing to train: call add_lora(model) first")
        T = model.config.context
        if len(train_tokens) <= T + 1:
            raise CapstoneError(f"the fine-tuning slice has {len(train_tokens)} tokens; need more than {T + 1}")
        self.model, self.steps, self.batch_size = model, steps, batch_size
        self.data = torch.from_numpy(np.asarray(train_tokens, dtype=np.int64))
        self.generator = torch.Generator().manual_seed(seed)
        self.optimizer = torch.optim.AdamW(self.params, lr=lr, weight_decay=0.0)
        self.step, self.last_loss = 0, None

    def run(self, until: int | None = None, log: Callable[[str], None] | None = None,
            on_step: Callable[[int, float], bool] | None = None) -> None:
        """Steps until `until` (default: all); `on_step(step, loss)` returning True stops there."""
        T, data = self.model.config.context, self.data
        self.model.train()
        while self.step < min(self.steps, self.steps if until is None else until):
            starts = torch.randint(len(data) - T - 1, (self.batch_size,), generator=self.generator)
            x = torch.stack([data[s:s + T] for s in starts.tolist()])
            y = torch.stack([data[s + 1:s + T + 1] for s in starts.tolist()])
            _, loss = self.model(x, y)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            self.step, self.last_loss = self.step + 1, loss.item()
            if log and (self.step % 50 == 0 or self.step == self.steps):
                log(f"finetune step {self.step}/{self.steps} | loss {self.last_loss:.4f}")
            if on_step and on_step(self.step, self.last_loss):
                break
        self.model.eval()

    def state_dict(self) -> dict:
        return {"format": FINETUNE_FORMAT, "step": self.step, "last_loss": self.last_loss,
                "lora": lora_state_dict(self.model), "optimizer": self.optimizer.state_dict(),
                "generator": self.generator.get_state(), "torch_rng": torch.get_rng_state()}

    def load_state_dict(self, state: dict) -> None:
        apply_lora_tensors(self.model, state["lora"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        torch.set_rng_state(state["torch_rng"])
        self.step, self.last_loss = state["step"], state["last_loss"]


def finetune(model: GPT, train_tokens: np.ndarray, val_tokens: np.ndarray, steps: int = 200,
             batch_size: int = 16, lr: float = 2e-3, seed: int = 0,
             log: Callable[[str], None] | None = None,
             on_step: Callable[[int, float], bool] | None = None) -> dict:
    """AdamW on the LoRA parameters only (add_lora first), random windows of train_tokens;
    returns nats/token on val_tokens before and after. `on_step(step, loss)` runs after every
    step (a progress bar); returning True stops the fine-tune there (`steps` says how many ran)."""
    tuner = FineTuner(model, train_tokens, steps, batch_size, lr, seed)
    before = mean_nll(model, val_tokens)
    tuner.run(log=log, on_step=on_step)
    return {"val_before": before, "val_after": mean_nll(model, val_tokens), "last_train_loss": tuner.last_loss,
            "trainable_parameters": trainable_parameters(model), "steps": tuner.step}


def finetune_workspace(workspace: Workspace, config: LoRAConfig | None = None,
                       log: Callable[[str], None] | None = None,
                       on_step: Callable[[int, float], bool] | None = None, *,
                       resume: bool = False, stop_after: int | None = None) -> dict:
    """Fine-tune the workspace checkpoint on the validation split's head (text pretraining never
    saw), score on its last `holdout` share; write finetune/lora.pt (the adapter of the steps
    done), finetune/ckpt.pt (what `resume=True` continues exactly) and finetune/finetune.json.
    `stop_after` ends this invocation after that many more steps."""
    from dataclasses import asdict

    from capstone.data import load_split_tokens
    from capstone.train import load_trained_model
    from capstone.workspace import write_json

    _, val_tokens, _ = load_split_tokens(workspace)
    model, base = load_trained_model(workspace)
    base_id = {"step": base["step"], "data_sha256": base["data_sha256"]}
    if resume:
        if config is not None:
            raise CapstoneError("--resume continues the saved fine-tune with its own settings; drop the other options")
        workspace.require(workspace.finetune_checkpoint, made_by="finetune")
        state = load_tensors(workspace.finetune_checkpoint)
        if not isinstance(state, dict) or state.get("format") != FINETUNE_FORMAT:
            raise CapstoneError(f"{workspace.finetune_checkpoint} is not a capstone fine-tune checkpoint")
        if state["base"] != base_id:
            raise CapstoneError("the fine-tune was stopped on another pretraining checkpoint (train ran since): "
                                "start a new fine-tune without --resume")
        c = LoRAConfig(**state["config"])
    else:
        c = config or LoRAConfig()
    if not 0 < c.holdout < 1:
        raise CapstoneError(f"holdout must be between 0 and 1, got {c.holdout}")
    cut = int(len(val_tokens) * (1 - c.holdout))
    torch.manual_seed(c.seed)
    add_lora(model, c.rank, c.alpha)
    tuner = FineTuner(model, val_tokens[:cut], c.steps, c.batch_size, c.lr, c.seed)
    if resume:
        tuner.load_state_dict(state)
        before = state["val_before"]
        if log:
            log(f"resuming the fine-tune from step {tuner.step}/{c.steps}")
    else:
        before = mean_nll(model, val_tokens[cut:])
    tuner.run(None if stop_after is None else tuner.step + stop_after, log, on_step)
    save_tensors({"rank": c.rank, "alpha": c.alpha, "targets": list(TARGETS), "lora": lora_state_dict(model)},
                 workspace.adapter)
    save_tensors(tuner.state_dict() | {"config": asdict(c), "base": base_id, "val_before": before},
                 workspace.finetune_checkpoint)  # renamed into place: a crash leaves the previous one intact
    result = {"val_before": before, "val_after": mean_nll(model, val_tokens[cut:]),
              "last_train_loss": tuner.last_loss, "trainable_parameters": trainable_parameters(model),
              "steps": tuner.step, "step": tuner.step, "total_steps": c.steps, "finished": tuner.step >= c.steps,
              "config": asdict(c), "context": model.config.context,
              "rank": c.rank, "alpha": c.alpha, "finetune_tokens": cut,
              "holdout_tokens": len(val_tokens) - cut, "adapter": str(workspace.adapter)}
    write_json(workspace.finetune_report, result)
    return result


def apply_lora_tensors(model: nn.Module, tensors: dict) -> None:
    """Load an adapter's lora_A / lora_B tensors into an adapted model, refusing any that do not fit.

    load_state_dict(strict=False) is needed (the adapter holds no base weights), but on its own
    it would load *nothing* from an adapter whose keys do not match -- a renamed module, a
    `module.` prefix from a wrapper -- and say nothing. So both lists it returns are checked:
    no adapter key may go unused, and every LoRA tensor of the model must be loaded."""
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    not_loaded = [k for k in missing if ".lora_" in k]
    if unexpected or not_loaded:
        first = (unexpected or not_loaded)[0]
        raise CapstoneError(
            f"the adapter does not fit the model: {len(unexpected)} of its tensors match no LoRA "
            f"parameter and {len(not_loaded)} LoRA parameters got no tensor (first: {first!r})")


def apply_adapter(model: GPT, adapter: dict) -> GPT:
    """Wrap `model` as the adapter says and load its lora_A / lora_B tensors (`apply_lora_tensors`
    checks that every one of them found its parameter)."""
    add_lora(model, adapter["rank"], adapter["alpha"], adapter["targets"])
    apply_lora_tensors(model, adapter["lora"])
    return model


def load_adapted(workspace: Workspace, merged: bool = True) -> GPT:
    """The workspace checkpoint with its saved LoRA adapter applied (merged by default)."""
    from capstone.train import load_trained_model

    workspace.require(workspace.adapter, made_by="finetune")
    model, _ = load_trained_model(workspace)
    apply_adapter(model, load_tensors(workspace.adapter))
    if merged:
        merge(model)
    return model.eval()
