"""Module 38: int8 dynamic quantization of the Linear layers.

`torch.ao.quantization.quantize_dynamic` stores each Linear's weight as int8 with one fp32
scale per tensor and quantizes the activations on the fly at every call; matmuls run in int8.
Scope here: the 24 Linears of the transformer blocks (qkv, attn proj, fc, mlp proj). The token
embedding stays fp32 -- it is tied to the output head, and quantizing the head would give it its
own int8 copy and break the tie (2.85x instead of 3.0x, measured) -- and so do the position
table and the LayerNorms. The size ratio below counts the whole `torch.save`d state_dict, so
those fp32 parts are in both numerator and denominator.

Torch 2.13 still ships the API but deprecates it (the migration target is torchao's
`quantize_`). The two warnings it raises are silenced here by exact message, and only around
our calls; if a later torch drops the API, `available()` says so and `quantize` raises a
CapstoneError naming the alternative instead of an ImportError.
"""

from __future__ import annotations

import contextlib
import copy
import io
import warnings

import torch
import torch.nn as nn

from capstone import CapstoneError
from capstone.config import EvalConfig
from capstone.model import GPT
from capstone.safe_files import load_tensors, save_tensors
from capstone.workspace import Workspace

SCOPE = "Linear layers of the transformer blocks (qkv, attn proj, fc, mlp proj); embeddings, LayerNorms fp32"

# The deprecation notices torch 2.13 raises, matched by the start of their text.
_KNOWN_WARNINGS = (
    (DeprecationWarning, r"torch\.ao\.quantization is deprecated"),
    (UserWarning, r"torch\.quantize_per_tensor, torch\.quantize_per_channel and other quantized tensor"),
    (UserWarning, r"TypedStorage is deprecated"),  # torch.load of the packed int8 weights
)


@contextlib.contextmanager
def quiet_deprecations():
    with warnings.catch_warnings():
        for category, message in _KNOWN_WARNINGS:
            warnings.filterwarnings("ignore", message=message, category=category)
        yield


def available() -> str | None:
    """None if int8 dynamic quantization works in this torch; otherwise why not."""
    try:
        with quiet_deprecations():
            from torch.ao.quantization import quantize_dynamic  # noqa: F401
    except ImportError as e:
        return (f"torch {torch.__version__} has no torch.ao.quantization.quantize_dynamic ({e}); "
                "it was deprecated in favour of torchao: `pip install torchao` and use "
                "torchao.quantization.quantize_(model, Int8DynamicActivationInt8WeightConfig())")
    engines = [e for e in torch.backends.quantized.supported_engines if e != "none"]
    if not engines:
        return f"torch {torch.__version__} was built without a quantized engine"
    return None


def quantize(model: GPT) -> GPT:
    """An int8 copy of `model` (the original is untouched), in eval mode."""
    problem = available()
    if problem:
        raise CapstoneError(problem)
    from torch.ao.quantization import quantize_dynamic

    q = copy.deepcopy(model).eval()
    with quiet_deprecations():
        quantize_dynamic(q.blocks, {nn.Linear}, dtype=torch.qint8, inplace=True)
    return q


def saved_bytes(model: nn.Module) -> int:
    """Bytes of torch.save(model.state_dict()) -- what a checkpoint of it costs on disk."""
    buffer = io.BytesIO()
    with quiet_deprecations():
        torch.save(model.state_dict(), buffer)
    return buffer.getbuffer().nbytes


def size_report(fp32: nn.Module, int8: nn.Module) -> dict:
    a, b = saved_bytes(fp32), saved_bytes(int8)
    return {"fp32_bytes": a, "int8_bytes": b, "ratio": a / b, "scope": SCOPE}


def save(model: GPT, path) -> None:
    """Save a quantized model with its config; `load` rebuilds it."""
    from dataclasses import asdict

    with quiet_deprecations():
        save_tensors({"format": "capstone-int8/1", "model_config": asdict(model.config),
                      "model": model.state_dict()}, path)


def load(path) -> GPT:
    from capstone.model import GPTConfig

    with quiet_deprecations():
        state = load_tensors(path)
    if not isinstance(state, dict) or state.get("format") != "capstone-int8/1":
        raise CapstoneError(f"{path} is not a quantized capstone model")
    model = quantize(GPT(GPTConfig(**state["model_config"])))  # the int8 structure, then its weights
    with quiet_deprecations():
        model.load_state_dict(state["model"])
    return model.eval()


def quantize_workspace(workspace: Workspace, config: EvalConfig | None = None, log=None) -> dict:
    """Quantize the workspace checkpoint; validation nats/token of both (scored as `eval`
    scores, with `config`'s stride); write quantize/."""
    from capstone.data import load_split_tokens
    from capstone.evaluate import sliding_window_nll
    from capstone.train import load_trained_model
    from capstone.workspace import write_json

    config = config or EvalConfig()
    _, val_tokens, _ = load_split_tokens(workspace)
    model, state = load_trained_model(workspace)
    qmodel = quantize(model)
    if log:
        log(f"scoring {len(val_tokens) - 1:,} validation tokens with the fp32 and the int8 model ...")
    nats = {}
    for name, m in (("fp32", model), ("int8", qmodel)):
        total, count = sliding_window_nll(m, val_tokens, config.stride, config.batch_size)
        nats[name] = total / count
    save(qmodel, workspace.int8_model)
    report = size_report(model, qmodel) | {
        "val_nats_fp32": nats["fp32"], "val_nats_int8": nats["int8"],
        "val_nats_difference": nats["int8"] - nats["fp32"], "stride": config.stride,
        "path": str(workspace.int8_model), "checkpoint_step": state["step"]}
    write_json(workspace.quantize_report, report)
    return report


def load_workspace(workspace: Workspace) -> GPT:
    """The workspace's int8 model (`capstone quantize`)."""
    workspace.require(workspace.int8_model, made_by="quantize")
    return load(workspace.int8_model)
