"""The described-value format: what a runner says about a value, and its one reader.

A runner describes each value it observed (``inner/describe.py`` writes them): a tensor
by its shape, stride, dtype, flags and (when small) its values; numbers, strings,
dtypes and devices as themselves; containers item by item; an exception by its class
and message; anything else by its class name alone.

:func:`read_value` is the one declared schema of a description. Every field is checked
for its type and every string cleaned; a value with a field that is not declared here,
or of the wrong type, raises ``TypeError`` (the whole result becomes a ``BadResult``).
What comes out is rebuilt from checked parts only, so no caller ever meets a forged
shape (``{"type": "tensor", "shape": 5}``) or a raw escape sequence hidden in a payload.
:func:`plain_value` turns a checked description back into plain Python.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from tutor.sandbox.wire.checks import _BIG, as_bool, as_dict, as_int, as_line, as_list, as_text, same

MAX_DEPTH = 24  # nesting of a description (and of the observation JSON it travels in)

SCALAR_TYPES = {"bool", "int", "float", "str", "dtype", "device"}
SEQUENCE_TYPES = {"tuple", "list", "set", "size"}
CLASS_TYPES = {"module", "object", "function"}
FLOAT_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
TENSOR_FIELDS = {
    "shape": "ints", "dtype": "text", "device": "text", "layout": "text", "requires_grad": "bool",
    "is_leaf": "bool", "grad_fn": "text?", "numel": "int", "version": "int", "stride": "ints",
    "is_contiguous": "bool", "storage_offset": "int", "is_view": "bool",
}
_COMMON_FIELDS = {"type", "shares_storage_with"}


def read_value(v: Any, clean: Callable[[str], str] = same, depth: int = 0) -> dict:
    """A described value, checked field by field and rebuilt; ``TypeError`` when it is not one."""
    d = as_dict(v)
    if depth > MAX_DEPTH:
        raise TypeError("value nested too deeply")
    t = d.get("type")
    out: dict = {"type": t}
    if t == "none":
        allowed = {"no_error", "line"}
        if "no_error" in d:
            out["no_error"] = as_bool(d["no_error"])
        if "line" in d:
            out["line"] = as_line(d["line"])
    elif t in SCALAR_TYPES:
        allowed = {"value"}
        out["value"] = _scalar(t, d.get("value"), clean)
    elif t in SEQUENCE_TYPES:
        allowed = {"items", "truncated"}
        out["items"] = [read_value(i, clean, depth + 1) for i in as_list(d.get("items", []))]
        if "truncated" in d:
            out["truncated"] = as_int(d["truncated"])
    elif t == "dict":
        allowed = {"items"}
        items = []
        for pair in as_list(d.get("items", [])):
            pair = as_list(pair)
            if len(pair) != 2:
                raise TypeError("a dict item is a [key, value] pair")
            items.append([clean(as_text(pair[0], 200)), read_value(pair[1], clean, depth + 1)])
        out["items"] = items
    elif t == "tensor":
        allowed = set(TENSOR_FIELDS) | {"values", "grad"}
        for name, kind in TENSOR_FIELDS.items():
            if name in d:
                out[name] = _typed(kind, d[name], clean)
        for name in ("shape", "dtype", "device", "numel"):
            if name not in out:
                raise TypeError(f"a tensor needs {name!r}")
        if "values" in d:
            out["values"] = _nested_values(d["values"], depth + 1, clean)
        if "grad" in d:
            grad = read_value(d["grad"], clean, depth + 1)
            if grad["type"] != "tensor":
                raise TypeError("grad must be a tensor")
            out["grad"] = grad
    elif t == "exception":
        allowed = {"name", "message", "line", "bases"}
        out["name"] = clean(as_text(d.get("name"), 200))
        out["message"] = clean(as_text(d.get("message", "")))
        if "bases" in d:
            out["bases"] = [clean(as_text(b, 200)) for b in as_list(d["bases"])[:8]]
        if "line" in d:
            out["line"] = as_line(d["line"])
    elif t in CLASS_TYPES:
        allowed = {"class"}
        out["class"] = clean(as_text(d.get("class", "object"), 200))
    else:
        raise TypeError(f"unknown value type {str(t)[:40]!r}")
    extra = set(d) - allowed - _COMMON_FIELDS
    if extra:
        raise TypeError(f"{t} value has undeclared fields {sorted(extra)[:5]}")
    if "shares_storage_with" in d:
        out["shares_storage_with"] = [clean(as_text(n, 200)) for n in as_list(d["shares_storage_with"])]
    return out


def _float_value(v: Any) -> float | str:
    if isinstance(v, str):
        if v not in FLOAT_WORDS:
            raise TypeError("a float is a number, 'nan', 'inf' or '-inf'")
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, int) and abs(v) >= _BIG):
        raise TypeError("expected a number")
    return v


def _scalar(t: str, v: Any, clean: Callable[[str], str]) -> Any:
    if t == "bool":
        return as_bool(v)
    if t == "int":
        return as_int(v)
    if t == "float":
        return _float_value(v)
    return clean(as_text(v))  # str, dtype, device


def _typed(kind: str, v: Any, clean: Callable[[str], str]) -> Any:
    if kind == "ints":
        return [as_int(i) for i in as_list(v)]
    if kind == "text":
        return clean(as_text(v, 200))
    if kind == "text?":
        return None if v is None else clean(as_text(v, 200))
    if kind == "bool":
        return as_bool(v)
    return as_int(v)


def _nested_values(v: Any, depth: int, clean: Callable[[str], str]) -> Any:
    """A tensor's values: nested lists of numbers, booleans and the float words (complex as text)."""
    if depth > MAX_DEPTH:
        raise TypeError("values nested too deeply")
    if isinstance(v, list):
        return [_nested_values(i, depth + 1, clean) for i in v]
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        return clean(as_text(v, 100))
    return _float_value(v)


class Unreadable(ValueError):
    """A description :func:`plain_value` cannot turn into a plain value."""


class TooLarge(Unreadable):
    """A tensor described without its values (more than ``wire.MAX_VALUES`` elements)."""


def plain_value(described: Any) -> Any:
    """A checked description (:func:`read_value`) back as plain Python; :class:`Unreadable` if it is not one.

    Scalars, strings, dtypes and devices as themselves (dtype and device as their text);
    tuples, sizes, lists, sets and dicts rebuilt; a tensor as its nested list of values
    (with the float words as floats; :class:`TooLarge` without them); an exception as its
    class name; anything else as ``<Class>``.
    """
    if not isinstance(described, dict):
        raise Unreadable("malformed observation")
    t = described.get("type")
    if t == "none":
        return None
    if t in ("bool", "int", "str", "dtype", "device"):
        return described.get("value")
    if t == "float":
        v = described.get("value")
        return FLOAT_WORDS.get(v, v) if isinstance(v, str) else v
    if t in ("tuple", "size"):
        return tuple(plain_value(i) for i in described.get("items", []))
    if t == "list":
        return [plain_value(i) for i in described.get("items", [])]
    if t == "set":
        return {_hashable(plain_value(i)) for i in described.get("items", [])}
    if t == "dict":
        return {str(k): plain_value(v) for k, v in described.get("items", [])}
    if t == "tensor":
        if "values" not in described:
            raise TooLarge("the tensor is too large to show its values")
        return tensor_values(described)
    if t == "exception":
        return described.get("name")
    if t in CLASS_TYPES:
        return f"<{described.get('class', 'object')}>"
    raise Unreadable(f"unknown observation type {t!r}")


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def tensor_values(described: dict) -> Any:
    """A described tensor's values as nested lists, the float words turned back into floats."""
    def fix(v: Any) -> Any:
        if isinstance(v, list):
            return [fix(i) for i in v]
        return FLOAT_WORDS.get(v, v) if isinstance(v, str) else v

    return fix(described.get("values"))
