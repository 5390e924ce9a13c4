"""The views a run may be asked for, their caps, and the one reader of what comes back.

A request names each view by a :class:`ViewSpec` (``kind`` storage | graph | module,
``of`` a name, and for a module optionally an optimizer's name); the runner answers
with one dict per spec (``inner/views.py`` writes them). :func:`read_view` checks every
field against the schema declared here and rebuilds the view from checked parts, the
way ``values.read_value`` does for a described value: a field that is not declared, or
of the wrong type, raises ``TypeError`` and the whole result is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from tutor.sandbox.wire.checks import as_bool, as_dict, as_int, as_list, as_number, as_text, one_of, same
from tutor.sandbox.wire.values import _float_value

VIEW_KINDS = ("storage", "graph", "module")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}(\.[A-Za-z_][A-Za-z0-9_]{0,63}){0,5}")

MAX_VIEWS = 8  # per run
MAX_CELLS = 64  # storage cells drawn; a larger storage shows a window of this many
MAX_MARKED = 4096  # elements of one tensor placed on cells
MAX_MEMBERS = 12  # tensors drawn over one storage
MAX_NODES = 40  # autograd nodes walked from a tensor
MAX_SAVED = 8  # saved tensors listed per node
MAX_UNREACHED = 20
MAX_UNREGISTERED = 20  # attributes holding tensors or modules a module does not register
MAX_MODULES = 100
MAX_PARAMS = 200  # parameters and buffers listed
MAX_GROUP_PARAMS = 200
MAX_KEYS = 300  # state_dict keys


@dataclass(frozen=True)
class ViewSpec:
    kind: str  # storage | graph | module
    of: str  # a name, or name.attr.attr, bound after the code ran
    optimizer: str = ""  # module views: an optimizer's name, to show which parameters each group holds

    def to_wire(self) -> dict:
        return {"kind": self.kind, "of": self.of, "optimizer": self.optimizer}


def read_view_spec(v: Any) -> ViewSpec:
    d = as_dict(v)
    kind = one_of(d.get("kind"), VIEW_KINDS)
    of, optimizer = as_text(d.get("of"), 400), as_text(d.get("optimizer", ""), 400)
    if not NAME.fullmatch(of) or (optimizer and not NAME.fullmatch(optimizer)):
        raise TypeError("a view names a Python name (or name.attribute)")
    return ViewSpec(kind, of, optimizer)


# ---------------------------------------------------------------- the schema of a view

_INTS, _TEXT, _BOOL, _INT, _NUMBER = "ints", "text", "bool", "int", "number"

_MEMBER = {"name": _TEXT, "shape": _INTS, "stride": _INTS, "offset": _INT, "dtype": _TEXT, "numel": _INT,
           "contiguous": _BOOL, "marks": ("pairs",), "outside": _INT, "distinct": _INT, "partial": _BOOL}
_SELECTED = {"name": _TEXT, "index": _INTS, "offset": _INT, "stride": _INTS, "cell": _INT}
_STORAGE = {"dtype": _TEXT, "itemsize": _INT, "cells": _INT, "start": _INT, "shown": _INT,
            "members": [_MEMBER], "values": ("cells",), "selected": _SELECTED}

_ROOT = {"name": _TEXT, "shape": _INTS, "dtype": _TEXT, "requires_grad": _BOOL, "is_leaf": _BOOL,
         "grad_fn": "text?", "why": _TEXT}
_SAVED = {"field": _TEXT, "state": ("one_of", ("ok", "modified", "freed", "unused", "unreadable")), "name": _TEXT,
          "shape": _INTS, "dtype": _TEXT, "version": _INT, "saved_version": _INT, "requires_grad": _BOOL}
_LEAF = {"name": _TEXT, "shape": _INTS, "requires_grad": _BOOL}
_NODE = {"id": _INT, "name": _TEXT, "inputs": ("inputs",), "saved": [_SAVED], "leaf": _LEAF}
_GRAPH = {"root": _ROOT, "nodes": [_NODE], "truncated": _BOOL, "unreached": [_TEXT]}

_TREE = {"path": _TEXT, "class": _TEXT, "depth": _INT}
_PARAM = {"name": _TEXT, "shape": _INTS, "dtype": _TEXT, "requires_grad": _BOOL, "groups": _INTS}
_BUFFER = {"name": _TEXT, "shape": _INTS, "dtype": _TEXT, "persistent": _BOOL}
_MEMBER_OF_GROUP = {"name": _TEXT, "shape": _INTS, "registered": _BOOL, "requires_grad": _BOOL}
_GROUP = {"index": _INT, "params": [_MEMBER_OF_GROUP], "count": _INT, "settings": ("settings",)}
_HELD = {"name": _TEXT, "holds": _TEXT}
_MODULE = {"class": _TEXT, "tree": [_TREE], "parameters": [_PARAM], "buffers": [_BUFFER], "state_dict": [_TEXT],
           "other_keys": [_TEXT], "unregistered": [_HELD], "optimizer": _TEXT, "optimizer_class": _TEXT,
           "groups": [_GROUP]}

SCHEMAS = {"storage": _STORAGE, "graph": _GRAPH, "module": _MODULE}
_LIST_CAPS = {id(_MEMBER): MAX_MEMBERS, id(_NODE): MAX_NODES, id(_SAVED): MAX_SAVED, id(_TREE): MAX_MODULES,
              id(_PARAM): MAX_PARAMS, id(_BUFFER): MAX_PARAMS, id(_MEMBER_OF_GROUP): MAX_GROUP_PARAMS,
              id(_GROUP): 64, id(_HELD): MAX_UNREGISTERED}


def read_view(v: Any, clean: Callable[[str], str] = same) -> dict:
    """A view as the runner sent it, checked field by field and rebuilt; ``TypeError`` when it is not one."""
    d = as_dict(v)
    kind = one_of(d.get("kind"), VIEW_KINDS)
    out: dict = {"kind": kind, "of": clean(as_text(d.get("of"), 400))}
    if "error" in d:
        if set(d) - {"kind", "of", "error"}:
            raise TypeError("a failed view carries only its error")
        out["error"] = clean(as_text(d["error"], 2000))
        return out
    rest = {k: val for k, val in d.items() if k not in ("kind", "of")}
    out.update(_record(SCHEMAS[kind], rest, clean))
    return out


def _record(schema: dict, d: Any, clean) -> dict:
    d = as_dict(d)
    extra = set(d) - set(schema)
    if extra:
        raise TypeError(f"undeclared view fields {sorted(extra)[:5]}")
    return {key: _field(schema[key], val, clean) for key, val in d.items()}


def _field(kind, v: Any, clean):
    if isinstance(kind, dict):
        return _record(kind, v, clean)
    if isinstance(kind, list):
        item = kind[0]
        cap = _LIST_CAPS.get(id(item), MAX_KEYS)
        return [_field(item, i, clean) for i in as_list(v)[:cap]]
    if isinstance(kind, tuple):
        name = kind[0]
        if name == "one_of":
            return one_of(v, kind[1])
        if name == "pairs":  # [cell, count]
            return [[as_int(a), as_int(b)] for a, b in (_pair(p) for p in as_list(v)[:MAX_CELLS])]
        if name == "cells":  # a storage's values: numbers, booleans, the float words, complex as text
            return [i if isinstance(i, bool) else clean(as_text(i, 40)) if isinstance(i, str) and
                    i not in ("nan", "inf", "-inf") else _float_value(i) for i in as_list(v)[:MAX_CELLS]]
        if name == "inputs":  # node ids, -1 past the walk's cap, null for an input that needs no grad
            return [None if i is None else as_int(i) for i in as_list(v)[:64]]
        if name == "settings":
            return [[clean(as_text(k, 60)), as_number(n)] for k, n in (_pair(p) for p in as_list(v)[:8])]
    if kind == _INTS:
        return [as_int(i) for i in as_list(v)[:64]]
    if kind == _TEXT:
        return clean(as_text(v, 300))
    if kind == "text?":
        return None if v is None else clean(as_text(v, 300))
    if kind == _BOOL:
        return as_bool(v)
    if kind == _INT:
        return as_int(v)
    raise TypeError(f"no reader for {kind!r}")


def _pair(p: Any) -> tuple[Any, Any]:
    p = as_list(p)
    if len(p) != 2:
        raise TypeError("expected a pair")
    return p[0], p[1]
