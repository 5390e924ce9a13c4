"""Views of what PyTorch has recorded, computed from the live objects after the code ran.

Three observations, each a JSON-safe dict of the shape ``wire/views.py`` reads:

* ``storage``: the storage cells under a tensor, every tensor-valued name that reaches
  them (which cells, how many of its elements land on each), and the index rule
  ``offset + i·stride₀ + j·stride₁`` worked for one element;
* ``graph``: the autograd graph from a tensor back to its leaves, with each node's saved
  tensors, their versions, and whether one was modified in place since it was saved;
* ``module``: a module's tree, parameters, buffers and ``state_dict`` keys, and which
  parameter objects each group of an optimizer holds (by identity).

Everything is bounded (cells, elements, nodes, parameters, keys) so a view stays far
below the observation's cap. Only attributes of torch's own objects are read; a
snippet's ``__repr__`` is never called. No addresses leave: storage cells are counted
from the start of the storage, so a view reads the same on any machine.
"""

from __future__ import annotations

import itertools
import re

from tutor.sandbox.wire.views import (MAX_CELLS, MAX_GROUP_PARAMS, MAX_KEYS, MAX_MARKED, MAX_MEMBERS, MAX_MODULES,
                                      MAX_NODES, MAX_PARAMS, MAX_SAVED, MAX_UNREACHED, MAX_UNREGISTERED, ViewSpec)

_VERSIONS = re.compile(r"is at version (\d+); expected version (\d+)")


def observe_views(specs, namespace: dict, torch) -> list[dict]:
    """One view per spec, in order; a view that cannot be made says why in ``error``."""
    out = []
    for spec in specs:
        try:
            out.append(observe_view(spec, namespace, torch))
        except Exception as exc:  # noqa: BLE001 - a snippet's object may break any attribute read
            out.append(_failed(spec, f"the view could not be made: {type(exc).__name__}: {str(exc)[:300]}"))
    return out


def observe_view(spec: ViewSpec, namespace: dict, torch) -> dict:
    found, value = lookup(spec.of, namespace)
    if not found:
        return _failed(spec, f"`{spec.of}` is not bound after the code ran")
    if spec.kind == "module":
        if not isinstance(value, torch.nn.Module):
            return _failed(spec, f"`{spec.of}` is a {type(value).__name__}, not a torch.nn.Module")
        optimizer = None
        if spec.optimizer:
            has_opt, optimizer = lookup(spec.optimizer, namespace)
            if not has_opt:
                return _failed(spec, f"`{spec.optimizer}` is not bound after the code ran")
            if not isinstance(optimizer, torch.optim.Optimizer):
                return _failed(spec, f"`{spec.optimizer}` is a {type(optimizer).__name__}, not a torch.optim.Optimizer")
        return module_view(spec, value, optimizer, tensor_names(namespace, torch), torch)
    if not isinstance(value, torch.Tensor):
        return _failed(spec, f"`{spec.of}` is a {type(value).__name__}, not a tensor")
    if spec.kind == "storage":
        return storage_view(spec, value, namespace, torch)
    return graph_view(spec, value, namespace, torch)


def lookup(path: str, namespace: dict):
    """``name`` or ``name.attr.attr`` in the namespace, read attribute by attribute (never ``eval``)."""
    head, *rest = path.split(".")
    if head not in namespace:
        return False, None
    value = namespace[head]
    for part in rest:
        try:
            value = getattr(value, part)
        except Exception:  # noqa: BLE001
            return False, None
    return True, value


def _failed(spec: ViewSpec, why: str) -> dict:
    return {"kind": spec.kind, "of": spec.of, "error": why}


def tensor_names(namespace: dict, torch) -> list[tuple[str, object]]:
    """The namespace's tensor-valued names, as the variable listing chooses them."""
    return [(name, value) for name, value in namespace.items()
            if not name.startswith("_") and name != "raised" and isinstance(value, torch.Tensor)]


# ---------------------------------------------------------------- storage


def _storage_range(t):
    try:
        storage = t.untyped_storage()
        return storage.data_ptr(), storage.nbytes()
    except (RuntimeError, NotImplementedError, TypeError):
        return None


def storage_view(spec: ViewSpec, t, namespace: dict, torch) -> dict:
    if t.layout != torch.strided:
        return _failed(spec, f"`{spec.of}` is a {t.layout} tensor: it has no strided storage to draw")
    span = _storage_range(t)
    if span is None or span[1] == 0 or t.device.type == "meta":
        return _failed(spec, f"`{spec.of}` has no storage holding data (empty, or on the meta device)")
    base, nbytes = span
    itemsize = t.element_size()
    total = nbytes // itemsize
    members = [(spec.of, t)]
    for name, other in tensor_names(namespace, torch):
        if other is t or name == spec.of or other.layout != torch.strided or len(members) >= MAX_MEMBERS:
            continue
        other_span = _storage_range(other)
        if other_span and other_span[1] and other_span[0] < base + nbytes and base < other_span[0] + other_span[1]:
            members.append((name, other))
    marked = [(name, other, _cells_of(other, base, itemsize)) for name, other in members]
    own = marked[0][2][0]
    start = 0 if total <= MAX_CELLS or not own else min(max(0, min(own)), max(0, total - MAX_CELLS))
    shown = min(MAX_CELLS, total - start)
    out = {"kind": "storage", "of": spec.of, "dtype": str(t.dtype).removeprefix("torch."), "itemsize": itemsize,
           "cells": total, "start": start, "shown": shown,
           "members": [_member(name, other, counts, partial, start, shown)
                       for name, other, (counts, partial) in marked]}
    values = _cell_values(t, start, shown, torch)
    if values is not None:
        out["values"] = values
    if t.numel():
        index = [min(1, size - 1) for size in t.shape]
        cell = t.storage_offset() + sum(i * s for i, s in zip(index, t.stride()))
        out["selected"] = {"name": spec.of, "index": index, "offset": t.storage_offset(),
                           "stride": list(t.stride()), "cell": cell}
    return out


def _cells_of(t, base: int, itemsize: int) -> tuple[dict[int, int], bool]:
    """How many of ``t``'s elements land on each cell of the storage starting at ``base`` (cells of ``itemsize``)."""
    counts: dict[int, int] = {}
    first = (t.data_ptr() - base) // itemsize if t.element_size() == itemsize else None
    step = t.element_size()
    indices = itertools.islice(itertools.product(*(range(n) for n in t.shape)), MAX_MARKED)
    for index in indices:
        element = sum(i * s for i, s in zip(index, t.stride()))
        cell = first + element if first is not None else (t.data_ptr() + element * step - base) // itemsize
        counts[cell] = counts.get(cell, 0) + 1
    return counts, t.numel() > MAX_MARKED


def _member(name: str, t, counts: dict[int, int], partial: bool, start: int, shown: int) -> dict:
    inside = {c: n for c, n in counts.items() if start <= c < start + shown}
    return {"name": name, "shape": list(t.shape), "stride": list(t.stride()), "offset": int(t.storage_offset()),
            "dtype": str(t.dtype).removeprefix("torch."), "numel": int(t.numel()),
            "contiguous": bool(t.is_contiguous()), "marks": sorted([c, n] for c, n in inside.items()),
            "outside": sum(n for c, n in counts.items() if c not in inside), "distinct": len(counts),
            "partial": partial}


def _cell_values(t, start: int, shown: int, torch):
    if t.device.type != "cpu" or t.is_quantized or shown <= 0:
        return None
    try:
        flat = t.detach().as_strided((shown,), (1,), start).resolve_conj().resolve_neg().tolist()
    except (RuntimeError, TypeError, ValueError):
        return None
    return [_cell(v) for v in flat]


def _cell(v):
    if isinstance(v, bool) or isinstance(v, int):
        return v
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return v
    return str(v)[:40]


# ---------------------------------------------------------------- autograd graph


def graph_view(spec: ViewSpec, t, namespace: dict, torch) -> dict:
    named = _named_tensors(namespace, torch)
    root = {"name": spec.of, "shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch."),
            "requires_grad": bool(t.requires_grad), "is_leaf": bool(t.is_leaf),
            "grad_fn": t.grad_fn.name() if t.grad_fn is not None else None}
    if t.grad_fn is None:
        root["why"] = why_no_graph(t, spec.of, named, torch)
    nodes, truncated, reached = _walk(t.grad_fn, named, torch) if t.grad_fn is not None else ([], False, set())
    if t.grad_fn is None and t.requires_grad:
        reached = {id(t)}
    unreached = [name for name, other in named if t.grad_fn is not None and other.requires_grad and other.is_leaf
                 and id(other) not in reached][:MAX_UNREACHED]
    return {"kind": "graph", "of": spec.of, "root": root, "nodes": nodes, "truncated": truncated,
            "unreached": unreached}


def _named_tensors(namespace: dict, torch) -> list[tuple[str, object]]:
    """Tensor names of the namespace, then the parameters of its modules (``model.fc.weight``)."""
    out = tensor_names(namespace, torch)
    seen = {id(v) for _, v in out}
    for name, value in namespace.items():
        if name.startswith("_") or not isinstance(value, torch.nn.Module):
            continue
        for pname, p in itertools.islice(value.named_parameters(), MAX_PARAMS):
            if id(p) not in seen:
                seen.add(id(p))
                out.append((f"{name}.{pname}", p))
    return out


def name_of(t, named) -> str:
    """The namespace name of ``t``: the same object, or the same elements of the same storage."""
    return named_as(t, named)[0]


def named_as(t, named) -> tuple[str, object]:
    """``(name, the namespace's tensor)`` for ``t`` (``("", t)`` when no name holds it)."""
    for name, other in named:
        if other is t:
            return name, other
    try:
        key = (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.dtype)
    except (RuntimeError, NotImplementedError):
        return "", t
    for name, other in named:
        try:
            if (other.untyped_storage().data_ptr(), other.storage_offset(), tuple(other.shape), tuple(other.stride()),
                    other.dtype) == key:
                return name, other
        except (RuntimeError, NotImplementedError):
            continue
    return "", t


def why_no_graph(t, name: str, named, torch) -> str:
    """Why ``t`` has no ``grad_fn``, as far as the tensor and its neighbours tell."""
    if t.requires_grad:
        return "a leaf that requires grad: backward() accumulates its gradient in .grad"
    if not (t.is_floating_point() or t.is_complex()):
        return (f"its dtype is {str(t.dtype).removeprefix('torch.')}: only floating-point and complex tensors can "
                "require grad, so a cast to an integer or bool dtype ends every path through it")
    if t.is_inference():
        return "made under torch.inference_mode(): nothing in that block is recorded"
    span = _storage_range(t)
    for other_name, other in named:
        if other is t or not other.requires_grad:
            continue
        other_span = _storage_range(other)
        if span and other_span and span == other_span:
            return (f"shares storage with `{other_name}`, which requires grad: it was made by .detach() "
                    "(or .data), which keeps the values and drops the history")
    return ("made outside autograd: under torch.no_grad(), or from tensors none of which requires grad "
            "(PyTorch keeps no record of which)")


def _walk(fn, named, torch):
    """Breadth-first from ``fn`` over ``next_functions``; at most ``MAX_NODES`` nodes."""
    ids = {fn: 0}
    order = [fn]
    nodes = []
    reached: set[int] = set()
    truncated = False
    i = 0
    while i < len(order):
        node = order[i]
        i += 1
        inputs = []
        for nxt, _ in getattr(node, "next_functions", ()):
            if nxt is None:
                inputs.append(None)
                continue
            if nxt not in ids:
                if len(order) >= MAX_NODES:
                    truncated = True
                    inputs.append(-1)
                    continue
                ids[nxt] = len(order)
                order.append(nxt)
            inputs.append(ids[nxt])
        entry = {"id": ids[node], "name": node.name().rpartition("::")[2], "inputs": inputs,
                 "saved": _saved(node, named)}
        variable = getattr(node, "variable", None)
        if isinstance(variable, torch.Tensor):
            reached.add(id(variable))
            entry["leaf"] = {"name": name_of(variable, named), "shape": list(variable.shape),
                             "requires_grad": bool(variable.requires_grad)}
        nodes.append(entry)
    return nodes, truncated, reached


def _saved(node, named) -> list[dict]:
    """A node's saved tensors: ``_raw_saved_*`` (built-in nodes) or ``_raw_saved_tensors`` (a custom Function)."""
    out = []
    names = dir(node)
    for attr in names:
        if not attr.startswith("_raw_saved_") or len(out) >= MAX_SAVED:
            continue
        field = attr.removeprefix("_raw_saved_")
        try:
            raw = getattr(node, attr)
        except RuntimeError:
            continue
        raws = raw if isinstance(raw, (list, tuple)) else [raw]
        # a custom Function's checked accessor is `saved_tensors` (hasattr would run it, and it may raise)
        checked_name = "saved_tensors" if field == "tensors" and "saved_tensors" in names else f"_saved_{field}"
        state, saved_version = "ok", None
        try:
            if getattr(node, checked_name) is None:
                state = "unused"  # declared by the node, not kept for this backward
        except RuntimeError as exc:
            message = str(exc)
            if "inplace" in message:
                state = "modified"
                found = _VERSIONS.search(message)
                saved_version = int(found.group(2)) if found else None
            elif "freed" in message or "second time" in message:
                state = "freed"
            else:
                state = "unreadable"
        for k, one in enumerate(raws[:MAX_SAVED]):
            data = getattr(one, "data", None)
            label = field if len(raws) == 1 else f"{field}[{k}]"
            if data is None:
                out.append({"field": label, "state": state})
                continue
            version = int(data._version)
            name, holder = named_as(data, named)  # a saved tensor unpacks detached: ask the name's own tensor
            out.append({"field": label, "state": state, "name": name, "shape": list(data.shape),
                        "dtype": str(data.dtype).removeprefix("torch."), "version": version,
                        "saved_version": saved_version if saved_version is not None else version,
                        "requires_grad": bool(holder.requires_grad)})
    return out


# ---------------------------------------------------------------- module and optimizer


def module_view(spec: ViewSpec, model, optimizer, named, torch) -> dict:
    params = list(itertools.islice(model.named_parameters(), MAX_PARAMS))
    by_id = {id(p): name for name, p in params}
    groups_of: dict[int, list[int]] = {}
    groups = []
    if optimizer is not None:
        for index, group in enumerate(optimizer.param_groups):
            members = []
            for p in group.get("params", [])[:MAX_GROUP_PARAMS]:
                groups_of.setdefault(id(p), []).append(index)
                name = by_id.get(id(p)) or name_of(p, named)  # an unregistered one: its name in the namespace
                members.append({"name": name, "shape": list(p.shape), "registered": id(p) in by_id,
                                "requires_grad": bool(p.requires_grad)})
            settings = {k: v for k, v in group.items()
                        if k != "params" and isinstance(v, (int, float)) and not isinstance(v, bool)}
            groups.append({"index": index, "params": members, "count": len(group.get("params", [])),
                           "settings": sorted([k, float(v)] for k, v in settings.items())[:8]})
    buffers = []
    for name, b in itertools.islice(model.named_buffers(), MAX_PARAMS):
        owner_path, _, leaf = name.rpartition(".")
        owner = model.get_submodule(owner_path) if owner_path else model
        buffers.append({"name": name, "shape": list(b.shape), "dtype": str(b.dtype).removeprefix("torch."),
                        "persistent": leaf not in getattr(owner, "_non_persistent_buffers_set", set())})
    keys = list(model.state_dict().keys())
    known = {name for name, _ in params} | {b["name"] for b in buffers if b["persistent"]}
    out = {"kind": "module", "of": spec.of, "class": type(model).__name__,
           "tree": [{"path": path, "class": type(m).__name__, "depth": path.count(".") + 1 if path else 0}
                    for path, m in itertools.islice(model.named_modules(), MAX_MODULES)],
           "parameters": [{"name": name, "shape": list(p.shape), "dtype": str(p.dtype).removeprefix("torch."),
                           "requires_grad": bool(p.requires_grad), "groups": groups_of.get(id(p), [])}
                          for name, p in params],
           "buffers": buffers, "state_dict": [str(k)[:200] for k in keys[:MAX_KEYS]],
           "other_keys": [str(k)[:200] for k in keys if k not in known][:MAX_KEYS]}
    out["unregistered"] = _unregistered(model, torch)
    if optimizer is not None:
        out["optimizer"] = spec.optimizer
        out["optimizer_class"] = type(optimizer).__name__
        out["groups"] = groups
    return out


def _unregistered(model, torch) -> list[dict]:
    """Attributes of each submodule that hold tensors or modules the module does not register.

    ``self.scale = torch.ones(3)`` or ``self.gates = {"in": nn.Parameter(...)}`` or a plain list
    of layers: autograd still sees them, but parameters(), state_dict(), .to() and the optimizer
    built from parameters() do not.
    """
    out = []
    for path, module in itertools.islice(model.named_modules(), MAX_MODULES):
        for name, value in list(vars(module).items()):
            if name.startswith("_") or len(out) >= MAX_UNREGISTERED:
                continue
            what = _held(value, torch)
            if what:
                out.append({"name": f"{path}.{name}" if path else name, "holds": what})
    return out


def _held(value, torch) -> str:
    if isinstance(value, torch.nn.Parameter):
        return f"an nn.Parameter {_shape(value)}"
    if isinstance(value, torch.Tensor):
        return f"a tensor {_shape(value)} {str(value.dtype).removeprefix('torch.')}"
    if isinstance(value, torch.nn.Module):
        return ""  # registered through __setattr__; one assigned around it would be in _modules anyway
    items = list(value.values()) if isinstance(value, dict) else list(value) if isinstance(value, (list, tuple)) else []
    kinds = {"nn.Parameter": 0, "tensor": 0, "module": 0}
    for item in items[:1000]:
        if isinstance(item, torch.nn.Parameter):
            kinds["nn.Parameter"] += 1
        elif isinstance(item, torch.Tensor):
            kinds["tensor"] += 1
        elif isinstance(item, torch.nn.Module):
            kinds["module"] += 1
    held = [f"{n} {k}{'s' if n != 1 else ''}" for k, n in kinds.items() if n]
    return f"a {type(value).__name__} holding {', '.join(held)}" if held else ""


def _shape(t) -> str:
    dims = list(t.shape)
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"
