"""Module 37: torch.compile -- same numbers, counted graph breaks, a hermetic cache.

`torch.compile(model)` has Dynamo trace the Python forward into FX graphs and Inductor turn them
into C++ (gcc) kernels. Three things to check before trusting it:

* Equality: compiled forward *and* backward equal eager within float tolerance (kernels fuse
  and reorder sums, so bit-equality is not expected).
* Graph breaks: wherever Dynamo cannot trace (a `.item()` that needs the value in Python, a
  print, data-dependent control flow) it splits the graph and falls back to Python, losing the
  fusion across the break. `explain` counts them and gives each reason. GPT.forward has none;
  a training step that logs `loss.item()` inside the compiled region has one.
* The cache: Inductor writes compiled kernels to TORCHINDUCTOR_CACHE_DIR (default: a per-user
  /tmp directory shared by every run on the machine). `hermetic_cache` points it at a directory
  of our own, so a test measures a cold compile and leaves nothing behind for the next.

Measured on 2 shared cores: a cold compile of the course model's training step takes about
23 s and gives the same steady-state speed as eager (capstone_anchors.md) -- on this CPU
the point is correctness, not speed.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import torch

from capstone.model import GPT


@contextlib.contextmanager
def hermetic_cache(directory: Path):
    """Compile with Inductor's caches in `directory`, and forget in-memory compiled code on
    entry and exit so nothing leaks between uses."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    saved = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(directory)
    torch._dynamo.reset()
    try:
        yield directory
    finally:
        torch._dynamo.reset()
        if saved is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = saved


def explain(fn, *args) -> dict:
    """Dynamo's view of fn(*args): graphs, graph-break count and the reason for each break."""
    out = torch._dynamo.explain(fn)(*args)
    return {"graphs": out.graph_count, "graph_breaks": out.graph_break_count,
            "reasons": [str(r.reason).splitlines()[0] for r in out.break_reasons]}


def logged_step(model: GPT):
    """A step function with the classic break: reading the loss into Python mid-graph."""
    def step(idx, targets):
        _, loss = model(idx, targets)
        value = loss.item()  # Python needs the number: Dynamo must stop the graph here
        return loss * 1.0, value
    return step


def compare_with_eager(model: GPT, idx: torch.Tensor, targets: torch.Tensor) -> dict:
    """Forward + backward eagerly and compiled (same weights); max |difference| of the loss,
    the logits and every gradient, and the compile time of the first call."""
    model.train(False)
    logits, loss = model(idx, targets)
    loss.backward()
    eager_grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)

    compiled = torch.compile(model)
    start = time.perf_counter()
    c_logits, c_loss = compiled(idx, targets)
    c_loss.backward()
    seconds = time.perf_counter() - start
    grads = {n: p.grad for n, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    return {"loss": (c_loss - loss).abs().item(), "logits": (c_logits - logits).abs().max().item(),
            "grads": max((grads[n] - g).abs().max().item() for n, g in eager_grads.items()),
            "first_call_seconds": seconds}
