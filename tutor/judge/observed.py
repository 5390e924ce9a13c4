"""Turn an observation (the sandbox's typed JSON) into a kind's canonical value."""

from __future__ import annotations

from typing import Any

from tutor.judge.parsers import normalise_text
from tutor.sandbox.wire import Unreadable, plain_value


class NotObservable(ValueError):
    """The observed value cannot be read as the asked kind (a lesson bug)."""


def to_python(described: Any) -> Any:
    """Rebuild a plain Python value from the sandbox's description of it (the wire's one reader)."""
    try:
        return plain_value(described)
    except Unreadable as exc:
        raise NotObservable(str(exc)) from None


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
