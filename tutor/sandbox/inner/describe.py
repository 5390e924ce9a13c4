"""Describing values for the UI side: the described-value format of ``wire.py``, written from real objects.

Reads attributes of real ``torch.Tensor``, numpy and builtin types only, and calls no
user ``__repr__``: what a snippet defines is reduced to its class name.
"""

from __future__ import annotations

import math
import sys
import warnings

from tutor.sandbox.wire import MAX_ITEMS, MAX_TEXT, MAX_VALUES, MAX_VARIABLES


def _float(v: float):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def numpy_scalar(value):
    """The Python number a NumPy scalar holds (``np.float64(0.0)`` -> ``0.0``), else None.

    Recognised by its type's module, so nothing here imports numpy (the inner sandbox imports
    only the standard library and torch). ``np.float64`` is a ``float`` subclass whose NumPy-2
    ``repr`` is ``np.float64(0.0)``: anything that writes a float as its ``repr`` must convert it
    first. A 0-d array is not a scalar (it stays an array).
    """
    kind = type(value)
    if kind.__module__ != "numpy" or kind.__name__ == "ndarray" or getattr(value, "shape", None) != ():
        return None
    try:
        plain = value.item()
    except Exception:  # noqa: BLE001 - a NumPy type whose item() is not a Python number
        return None
    return plain if isinstance(plain, (bool, int, float, complex)) else None


def _plain_values(v):
    if isinstance(v, list):
        return [_plain_values(i) for i in v]
    if isinstance(v, bool) or isinstance(v, int):
        return v
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, complex):
        return str(v)
    return str(v)


def describe(value, torch, depth: int = 0) -> dict:
    """A JSON-safe description of ``value``; reads attributes, never calls user ``__repr__``."""
    if depth > 6:
        return {"type": "object", "class": type(value).__name__}
    if value is None:
        return {"type": "none"}
    plain = numpy_scalar(value)
    if plain is not None:
        value = plain
    if isinstance(value, bool):
        return {"type": "bool", "value": value}
    if isinstance(value, int):
        return {"type": "int", "value": int(value)} if abs(value) < 2**63 else {"type": "str", "value": str(value)}
    if isinstance(value, float):
        return {"type": "float", "value": _float(float(value))}
    if isinstance(value, str):
        return {"type": "str", "value": value[:MAX_TEXT]}
    if torch is not None:
        if isinstance(value, torch.Size):
            return {"type": "size", "items": [{"type": "int", "value": int(d)} for d in value]}
        if isinstance(value, torch.Tensor):
            return _describe_tensor(value, torch, depth)
        if isinstance(value, torch.dtype):
            return {"type": "dtype", "value": str(value)}
        if isinstance(value, torch.device):
            return {"type": "device", "value": str(value)}
        if isinstance(value, torch.nn.Module):
            return {"type": "module", "class": type(value).__name__}
    if isinstance(value, BaseException):
        # torch exposes some exceptions under a public name for a private class
        # (torch.linalg.LinAlgError is torch._C._LinAlgError): show the name people type.
        name = type(value).__name__.lstrip("_") or type(value).__name__
        # its base classes, nearest first, so a judge can accept a documented base (RuntimeError for
        # TorchRuntimeError) where an ask allows one; BaseException and object say nothing
        bases = [c.__name__.lstrip("_") or c.__name__ for c in type(value).__mro__[1:]
                 if c not in (BaseException, object)][:8]
        return {"type": "exception", "name": name, "message": str(value)[:MAX_TEXT], "bases": bases}
    if isinstance(value, (tuple, list)):
        kind = "tuple" if isinstance(value, tuple) else "list"
        out = {"type": kind, "items": [describe(v, torch, depth + 1) for v in list(value)[:MAX_ITEMS]]}
        if len(value) > MAX_ITEMS:
            out["truncated"] = len(value)
        return out
    if isinstance(value, dict):
        items = list(value.items())[:MAX_ITEMS]
        return {"type": "dict", "items": [[str(k)[:200], describe(v, torch, depth + 1)] for k, v in items]}
    if isinstance(value, (set, frozenset)):
        items = sorted(value, key=lambda v: (type(v).__name__, str(v)))[:MAX_ITEMS]
        return {"type": "set", "items": [describe(v, torch, depth + 1) for v in items]}
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        if isinstance(value, numpy.ndarray):
            out = {"type": "tensor", "shape": list(value.shape), "dtype": f"numpy.{value.dtype}",
                   "device": "cpu", "numel": int(value.size), "requires_grad": False, "is_leaf": True,
                   "grad_fn": None, "layout": "numpy",
                   "stride": [s // value.itemsize for s in value.strides] if value.itemsize else [],
                   "is_contiguous": bool(value.flags["C_CONTIGUOUS"])}
            if value.size <= MAX_VALUES and value.dtype.kind in "biuf":
                out["values"] = _plain_values(value.tolist())
            return out
    if callable(value):
        return {"type": "function", "class": type(value).__name__}
    return {"type": "object", "class": type(value).__name__}


def _describe_tensor(t, torch, depth: int) -> dict:
    out = {
        "type": "tensor",
        "shape": list(t.shape),
        "dtype": str(t.dtype),
        "device": str(t.device),
        "layout": str(t.layout),
        "requires_grad": bool(t.requires_grad),
        "is_leaf": bool(t.is_leaf),
        "grad_fn": type(t.grad_fn).__name__ if t.grad_fn is not None else None,
        "numel": int(t.numel()),
    }
    try:
        out["version"] = int(t._version)
    except (RuntimeError, AttributeError):
        pass
    if t.layout == torch.strided:
        out["stride"] = list(t.stride())
        out["is_contiguous"] = bool(t.is_contiguous())
        out["storage_offset"] = int(t.storage_offset())
        out["is_view"] = t._base is not None
    if t.numel() <= MAX_VALUES and t.device.type == "cpu" and t.layout == torch.strided and not t.is_quantized:
        try:
            out["values"] = _plain_values(t.detach().resolve_conj().resolve_neg().tolist())
        except (RuntimeError, TypeError):
            pass
    if depth == 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grad = t.grad if t.is_leaf or t.retains_grad else None
        if grad is not None:
            out["grad"] = _describe_tensor(grad, torch, depth + 1)
    return out


def _storage_key(t) -> int | None:
    try:
        storage = t.untyped_storage()
        return storage.data_ptr() if storage.nbytes() else None
    except (RuntimeError, NotImplementedError, TypeError):
        return None


def describe_variables(namespace: dict, torch) -> dict:
    import types

    chosen = {}
    for name, value in namespace.items():
        if name.startswith("_") or name == "raised" or isinstance(value, (types.ModuleType, type)):
            continue
        if callable(value) and not (torch is not None and isinstance(value, (torch.nn.Module, torch.Tensor))):
            continue
        chosen[name] = value
        if len(chosen) >= MAX_VARIABLES:
            break
    out = {name: describe(value, torch) for name, value in chosen.items()}
    if torch is not None:
        by_storage: dict[int, list[str]] = {}
        for name, value in chosen.items():
            if isinstance(value, torch.Tensor) and (key := _storage_key(value)) is not None:
                by_storage.setdefault(key, []).append(name)
        for names in by_storage.values():
            for name in names:
                out[name]["shares_storage_with"] = [n for n in names if n != name]
    return out


