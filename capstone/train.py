"""Stage 5 (module 33): pretraining on CPU, with checkpoints that resume exactly.

The loop is the plain one from module 16 -- sample a batch, forward, backward, clip, step --
plus what makes a long CPU run practical:

* AdamW with weight decay on matrices only (decaying biases, LayerNorm gains and the
  position table just fights the normalisation), and a learning rate that warms up linearly
  (Adam's second-moment estimates are noise for the first steps) then follows a cosine down
  to `min_lr`.
* Gradient-norm clipping, so one unlucky batch cannot throw the weights far.
* Checkpoints holding everything the next step depends on: weights, AdamW moments, the
  scheduler's step, the batch sampler's generator and the global RNGs of torch (dropout),
  numpy and Python. Stop anywhere, resume, and the weights are bit-identical to a run that
  never stopped -- on the same machine, torch build and thread count; a different thread
  count may sum floats in a different order.
* A step budget (which also sets the schedule's length) and an optional time budget that
  stops early but leaves a checkpoint `--resume` can continue.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from capstone import CapstoneError
from capstone.config import RECIPE_DROPOUT, TrainConfig
from capstone.data import load_split_tokens, training_loader
from capstone.model import GPT, GPTConfig
from capstone.safe_files import load_tensors, save_tensors
from capstone.workspace import Workspace, log_to_stderr, write_json

CHECKPOINT_FORMAT = "capstone-ckpt/1"


def lr_multiplier(config: TrainConfig) -> Callable[[int], float]:
    """The factor LambdaLR applies to the peak lr after `step` optimizer steps."""
    floor = config.min_lr / config.lr

    def at(step: int) -> float:
        if step < config.warmup_steps:
            return (step + 1) / config.warmup_steps
        progress = min(1.0, (step - config.warmup_steps) / max(1, config.steps - config.warmup_steps))
        return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))

    return at


def make_optimizer(model: GPT, config: TrainConfig) -> torch.optim.AdamW:
    # Matrices (Linear weights, the token embedding / tied head) are decayed; vectors
    # (biases, LayerNorm) and the position table are not.
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and not n.startswith("pos_emb")]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2 or n.startswith("pos_emb")]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=config.lr, betas=(config.beta1, config.beta2),
    )


# --------------------------------------------------------------------------- RNG state
# Checkpoints are loaded with torch.load(weights_only=True), which refuses arbitrary pickled
# objects; so numpy's and Python's RNG states are stored as tensors and plain lists.


def capture_rng() -> dict:
    name, keys, pos, has_gauss, cached = np.random.get_state()
    version, py_state, gauss_next = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "numpy": {"name": name, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                  "has_gauss": int(has_gauss), "cached_gaussian": float(cached)},
        "python": [version, list(py_state), gauss_next],
    }


def restore_rng(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    n = state["numpy"]
    np.random.set_state((n["name"], n["keys"].numpy().astype(np.uint32), n["pos"],
                         n["has_gauss"], n["cached_gaussian"]))
    version, py_state, gauss_next = state["python"]
    random.setstate((version, tuple(py_state), gauss_next))


# --------------------------------------------------------------------------- the trainer


@torch.no_grad()
def estimate_val_loss(model: GPT, val_tokens: np.ndarray, max_windows: int | None = 64) -> float:
    """A cheap progress signal: mean loss over the first non-overlapping validation windows
    (all of them if max_windows is None). The real figure, with sliding windows, is
    capstone.evaluate's job."""
    T = model.config.context
    n = (len(val_tokens) - 1) // T
    n = n if max_windows is None else min(max_windows, n)
    if n == 0:
        return float("nan")
    window = torch.from_numpy(val_tokens[: n * T + 1].astype(np.int64))
    x, y = window[:-1].view(n, T), window[1:].view(n, T)
    was_training = model.training
    model.eval()
    _, loss = model(x, y)
    model.train(was_training)
    return loss.item()


class Trainer:
    """Owns everything a training step touches, so that it can all be saved and restored."""

    def __init__(self, model_config: GPTConfig, config: TrainConfig, train_tokens: np.ndarray):
        self.model_config, self.config = model_config, config
        # Seed every RNG before building anything, so a fresh run is reproducible too.
        torch.manual_seed(config.seed)
        np.random.seed(config.seed)
        random.seed(config.seed)
        self.model = GPT(model_config)
        self.model.train()
        self.optimizer = make_optimizer(self.model, config)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lr_multiplier(config))
        self.loader, self.sampler = training_loader(train_tokens, model_config.context,
                                                    config.batch_size, seed=config.seed)
        self.step = 0
        self.elapsed = 0.0  # seconds of training, summed over resumed runs

    def train_step(self, x: torch.Tensor, y: torch.Tensor) -> float:
        _, loss = self.model(x, y)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
        self.optimizer.step()
        self.scheduler.step()
        self.step += 1
        return loss.item()

    def state_dict(self) -> dict:
        return {
            "format": CHECKPOINT_FORMAT,
            "step": self.step,
            "elapsed": self.elapsed,
            "model_config": asdict(self.model_config),
            "train_config": asdict(self.config),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "sampler": self.sampler.state_dict(),
            "rng": capture_rng(),
        }

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.sampler.load_state_dict(state["sampler"])
        restore_rng(state["rng"])
        self.step, self.elapsed = state["step"], state["elapsed"]

    def save(self, path: Path, extra: dict | None = None) -> None:
        save_tensors(self.state_dict() | (extra or {}), path)  # renamed into place: a crash leaves the previous one

    def run(self, until_step: int, time_budget: float | None = None,
            val_tokens: np.ndarray | None = None,
            on_checkpoint: Callable[[], None] | None = None,
            log: Callable[[str], None] | None = None,
            on_step: Callable[[int, float], bool] | None = None) -> dict:
        """Train until `until_step` (or until `time_budget` seconds pass); return a summary
        (`last_loss` and `tokens_per_second` are None if no step ran).

        `on_step(step, loss)` is called after every step (a progress bar); when it returns True
        the loop stops there, at a step boundary, so the checkpoint that follows resumes exactly."""
        cfg, tokens_per_step = self.config, self.config.batch_size * self.model_config.context
        start = window_start = time.perf_counter()
        first_step, window_steps, loss = self.step, 0, None
        batches = iter(self.loader)
        while self.step < until_step:
            if time_budget is not None and time.perf_counter() - start >= time_budget:
                break
            x, y = next(batches)
            loss = self.train_step(x, y)
            window_steps += 1
            if log and (self.step % cfg.log_every == 0 or self.step == until_step):
                now = time.perf_counter()
                rate = window_steps * tokens_per_step / (now - window_start)
                line = (f"step {self.step:>5}/{cfg.steps} | loss {loss:.4f} | "
                        f"lr {self.scheduler.get_last_lr()[0]:.2e} | {rate / 1000:.1f}k tok/s | "
                        f"{self.elapsed + now - start:.0f}s")
                if val_tokens is not None and cfg.eval_every and self.step % cfg.eval_every == 0:
                    line += f" | val~ {estimate_val_loss(self.model, val_tokens):.4f}"
                log(line)
                window_start, window_steps = time.perf_counter(), 0
            if on_checkpoint and cfg.checkpoint_every and self.step % cfg.checkpoint_every == 0:
                on_checkpoint()
            if on_step and on_step(self.step, loss):
                break
        seconds = time.perf_counter() - start
        self.elapsed += seconds
        done = self.step - first_step
        return {"step": self.step, "last_loss": loss, "seconds": seconds,
                "tokens_per_second": done * tokens_per_step / seconds if done else None}


# --------------------------------------------------------------------------- the workspace run


def load_checkpoint(path: Path) -> dict:
    state = load_tensors(path)  # torch.load(weights_only=True), never through a link
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise CapstoneError(f"{path} is not a capstone checkpoint")
    return state


def load_trained_model(workspace: Workspace) -> tuple[GPT, dict]:
    """The workspace's checkpoint as a GPT in eval mode, with the checkpoint dict itself."""
    workspace.require(workspace.checkpoint, made_by="train")
    state = load_checkpoint(workspace.checkpoint)
    model = GPT(GPTConfig(**state["model_config"]))
    model.load_state_dict(state["model"])
    return model.eval(), state


def train(workspace: Workspace, model_config: GPTConfig | None = None,
          config: TrainConfig | None = None, *, resume: bool = False,
          stop_after: int | None = None, time_budget: float | None = None,
          log: Callable[[str], None] | None = log_to_stderr,
          on_step: Callable[[int, float], bool] | None = None) -> dict:
    """Train on the workspace's tokens; write train/ckpt.pt and train/train.json.

    resume=True continues the checkpoint with the configs stored in it (the configs passed
    here must then be None). `stop_after` ends this invocation after that many steps and
    `time_budget` after that many seconds; neither changes the schedule, so a later
    `resume` continues as if nothing had happened. `on_step(step, loss)` runs after every
    step and stops the run, with a checkpoint, when it returns True (Ctrl-C, a progress bar).
    """
    train_tokens, val_tokens, data_meta = load_split_tokens(workspace)
    if resume:
        if model_config is not None or config is not None:
            raise CapstoneError("--resume continues the saved run with its own settings; drop the other options")
        workspace.require(workspace.checkpoint, made_by="train")
        state = load_checkpoint(workspace.checkpoint)
        if state["data_sha256"] != data_meta["train"]["sha256"]:
            raise CapstoneError("the checkpoint was trained on other tokens (tokenize ran since): "
                                "start a new run without --resume")
        trainer = Trainer(GPTConfig(**state["model_config"]), TrainConfig(**state["train_config"]),
                          train_tokens)
        trainer.load_state_dict(state)
        if log:
            log(f"resuming from step {trainer.step}/{trainer.config.steps}")
    else:
        model_config = model_config or GPTConfig(vocab_size=data_meta["vocab_size"], dropout=RECIPE_DROPOUT)
        config = config or TrainConfig()
        if model_config.vocab_size < data_meta["vocab_size"]:
            raise CapstoneError(f"model vocab {model_config.vocab_size} is smaller than the tokenizer's "
                                f"{data_meta['vocab_size']}")
        trainer = Trainer(model_config, config, train_tokens)
        if log:
            log(f"new run: {trainer.model.num_parameters():,} parameters, "
                f"{len(train_tokens):,} training tokens, {config.steps} steps of "
                f"{config.batch_size}x{model_config.context} tokens")

    extra = {"data_sha256": data_meta["train"]["sha256"]}

    def checkpoint() -> None:
        trainer.save(workspace.checkpoint, extra)

    until = trainer.config.steps if stop_after is None else min(trainer.config.steps, trainer.step + stop_after)
    result = trainer.run(until, time_budget, val_tokens, checkpoint, log, on_step)
    checkpoint()
    summary = {
        "step": trainer.step,
        "steps": trainer.config.steps,
        "finished": trainer.step >= trainer.config.steps,
        "last_train_loss": result["last_loss"],
        "val_loss_estimate": estimate_val_loss(trainer.model, val_tokens),
        "training_seconds": trainer.elapsed,
        "tokens_per_second_this_run": result["tokens_per_second"],
        "parameters": trainer.model.num_parameters(),
        "model_config": asdict(trainer.model_config),
        "train_config": asdict(trainer.config),
        "threads": torch.get_num_threads(),
        "data": data_meta,
    }
    write_json(workspace.train_meta, summary)
    return summary
