"""Turn an observation (the sandbox's typed JSON) into a kind's canonical value."""

from __future__ import annotations

import math
from typing import Any

from tutor.judge.parsers import normalise_text


class NotObservable(ValueError):
    """The observed value cannot be read as the asked kind (a lesson bug)."""


_FLOAT_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def to_python(described: Any) -> Any:
    """Rebuild a plain Python value from the sandbox's description of it."""
    if not isinstance(described, dict):
        raise NotObservable("malformed observation")
    t = described.get("type")
    if t == "none":
        return None
    if t in ("bool", "int", "str"):
        return described.get("value")
    if t == "float":
        v = described.get("value")
        return _FLOAT_WORDS.get(v, v) if isinstance(v, str) else v
    if t in ("tuple", "size"):
        return tuple(to_python(i) for i in described.get("items", []))
    if t == "list":
        return [to_python(i) for i in described.get("items", [])]
    if t == "set":
        return {_hashable(to_python(i)) for i in described.get("items", [])}
    if t == "dict":
        return {str(k): to_python(v) for k, v in described.get("items", [])}
    if t in ("dtype", "device"):
        return described.get("value")
    if t == "tensor":
        if "values" not in described:
            raise NotObservable("the tensor is too large to show its values")
        return tensor_values(described)
    if t == "exception":
        return described.get("name")
    if t in ("module", "object", "function"):
        return f"<{described.get('class', 'object')}>"
    raise NotObservable(f"unknown observation type {t!r}")


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def tensor_values(described: dict) -> Any:
    def fix(v: Any) -> Any:
        if isinstance(v, list):
            return [fix(i) for i in v]
        return _FLOAT_WORDS.get(v, v) if isinstance(v, str) else v

    return fix(described.get("values"))


def observed_value(kind: str, described: Any, options: tuple[str, ...] = ()) -> Any:
    value = to_python(described)
    t = described.get("type")
    if kind in ("shape", "stride"):
        if isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return tuple(value)
        raise NotObservable(f"expected a tuple of ints, observed {t}")
    if kind == "dtype":
        if t == "dtype":
            return value
        raise NotObservable(f"expected a dtype, observed {t}")
    if kind == "device":
        if t in ("device", "str"):
            return value
        raise NotObservable(f"expected a device, observed {t}")
    if kind == "bool":
        if isinstance(value, bool):
            return value
        raise NotObservable(f"expected a bool, observed {t}")
    if kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise NotObservable(f"expected an int, observed {t}")
    if kind == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise NotObservable(f"expected a number, observed {t}")
    if kind == "tensor":
        if t == "tensor" or isinstance(value, (list, tuple, int, float)):
            return _lists(value)
        raise NotObservable(f"expected tensor values, observed {t}")
    if kind == "error":
        if t == "exception":
            return value
        if t == "none" and described.get("no_error"):
            return "no error"
        raise NotObservable(f"expected an exception or no error, observed {t}")
    if kind == "choice":
        text = normalise_text(str(value)).lower()
        for i, option in enumerate(options):
            if normalise_text(option).lower() == text:
                return i
        raise NotObservable(f"observed {value!r}, which is not one of the options")
    if kind == "names":
        if isinstance(value, dict):
            return frozenset(value)
        if isinstance(value, (list, tuple, set)) and all(isinstance(v, str) for v in value):
            return frozenset(value)
        raise NotObservable(f"expected a collection of names, observed {t}")
    if kind == "text":
        return normalise_text(value if isinstance(value, str) else str(value))
    if kind == "value":
        return value
    raise NotObservable(f"unknown kind {kind!r}")


def _lists(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    return value
