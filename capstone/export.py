"""Module 38: torch.export with dynamic batch and sequence dimensions.

`torch.export.export` traces the model ahead of time into an ExportedProgram: the tensor
computation only, no Python. The batch and sequence dimensions are symbolic (`Dim`), so one
program serves any batch size and any length from 1 to the context; the saved `.pt2` file is
loaded with `torch.export.load` -- no capstone code needed to run it.

The exported program takes token ids (B, T) and returns logits (B, T, vocab): `LogitsOnly`
drops the loss and the (unused here) targets / KV-cache arguments of `GPT.forward`.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn as nn
from torch.export import Dim

from capstone.model import GPT
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


def save(program: torch.export.ExportedProgram, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.export.save(program, path)


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
    save(program, path)
    reloaded = load(path)
    generator = torch.Generator().manual_seed(0)
    worst = 0.0
    shapes = [(1, 1), (3, min(37, config.context)), (2, config.context)]
    with torch.no_grad():
        for batch, length in shapes:
            idx = torch.randint(config.vocab_size, (batch, length), generator=generator)
            worst = max(worst, (reloaded(idx) - model(idx)[0]).abs().max().item())
    report = {"path": str(path), "bytes": path.stat().st_size, "export_seconds": seconds,
              "max_abs_diff_vs_eager": worst, "checked_shapes": [list(s) for s in shapes],
              "checkpoint_step": state["step"], "context": config.context, "vocab_size": config.vocab_size}
    write_json(workspace.export_report, report)
    if log:
        log(f"exported in {seconds:.1f}s; reloaded program vs eager: max |diff| {worst:.2e}")
    return report


def load_workspace(workspace: Workspace) -> tuple[nn.Module, int]:
    """The workspace's exported program (ids -> logits) and the context it accepts."""
    workspace.require(workspace.exported_program, workspace.export_report, made_by="export")
    return load(workspace.exported_program), read_json(workspace.export_report)["context"]
