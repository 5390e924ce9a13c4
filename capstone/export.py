"""Module 38: torch.export with dynamic batch and sequence dimensions.

`torch.export.export` traces the model ahead of time into an ExportedProgram: the tensor
computation only, no Python. The batch and sequence dimensions are symbolic (`Dim`), so one
program serves any batch size and any length from 1 to the context; the saved `.pt2` file is
loaded with `torch.export.load` -- no capstone code needed to run it.

But a `.pt2` may hold pickles, and `torch.export.load` unpickles them: loading one runs whatever
its author put there. So this module loads only a program it has just serialised (`export_workspace`
checks the bytes it wrote, from memory), and `load_workspace` exports the checkpoint again rather
than read `model.pt2` back: a run of the learner's package, in the sandbox, may have written it.

The exported program takes token ids (B, T) and returns logits (B, T, vocab): `LogitsOnly`
drops the loss and the (unused here) targets / KV-cache arguments of `GPT.forward`.
"""

from __future__ import annotations

import io
from pathlib import Path

import torch
import torch.nn as nn
from torch.export import Dim

from capstone import CapstoneError
from capstone.model import GPT
from capstone.safe_files import write_bytes
from capstone.train import load_trained_model
from capstone.workspace import Workspace, read_json, write_json


class LogitsOnly(nn.Module):
    def __init__(self, model: GPT):
        super().__init__()
        self.model = model

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.model(idx)[0]


def export(model: GPT, max_batch: int = 64) -> torch.export.ExportedProgram:
    """The model (eval mode) exported with dynamic batch (1..max_batch) and sequence (1..context)."""
    model.eval()
    context = model.config.context
    example = torch.zeros(2, min(8, context), dtype=torch.long)  # not 0 or 1: those specialise
    dynamic = {"idx": {0: Dim("batch", min=1, max=max_batch), 1: Dim("seq", min=1, max=context)}}
    with torch.no_grad():
        return torch.export.export(LogitsOnly(model), (example,), dynamic_shapes=dynamic)


def save(program: torch.export.ExportedProgram, path: Path) -> bytes:
    """Write the program to `path` (a new file renamed into place); the bytes written."""
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    write_bytes(path, buffer.getvalue())
    return buffer.getvalue()


def load(path: Path) -> nn.Module:
    """A callable module: ids (B, T) -> logits (B, T, vocab)."""
    return torch.export.load(path).module()


def export_workspace(workspace: Workspace, log=None) -> dict:
    """Export the workspace checkpoint to export/model.pt2; check the reloaded program on a
    few shapes against eager."""
    import time

    model, state = load_trained_model(workspace)
    config = model.config
    start = time.perf_counter()
    program = export(model)
    seconds = time.perf_counter() - start
    path = workspace.exported_program
    written = save(program, path)
    reloaded = load(io.BytesIO(written))  # what was written, not the file: see the module's docstring
    generator = torch.Generator().manual_seed(0)
    worst = 0.0
    shapes = [(1, 1), (3, min(37, config.context)), (2, config.context)]
    with torch.no_grad():
        for batch, length in shapes:
            idx = torch.randint(config.vocab_size, (batch, length), generator=generator)
            worst = max(worst, (reloaded(idx) - model(idx)[0]).abs().max().item())
    report = {"path": str(path), "bytes": len(written), "export_seconds": seconds,
              "max_abs_diff_vs_eager": worst, "checked_shapes": [list(s) for s in shapes],
              "checkpoint_step": state["step"], "context": config.context, "vocab_size": config.vocab_size}
    write_json(workspace.export_report, report)
    if log:
        log(f"exported in {seconds:.1f}s; reloaded program vs eager: max |diff| {worst:.2e}")
    return report


def load_workspace(workspace: Workspace) -> tuple[nn.Module, int]:
    """The workspace's model as `capstone export` exports it (ids -> logits), and the context it
    accepts: exported again from the checkpoint, never loaded from `model.pt2` (see the docstring)."""
    workspace.require(workspace.exported_program, workspace.export_report, made_by="export")
    model, state = load_trained_model(workspace)
    if read_json(workspace.export_report).get("checkpoint_step") != state["step"]:
        raise CapstoneError("the checkpoint changed since `capstone export` ran (train ran since): run export again")
    return export(model).module(), model.config.context
