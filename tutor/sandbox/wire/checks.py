"""Field checks for what crosses the wire: each returns the value or raises ``TypeError``."""

from __future__ import annotations

from typing import Any

_BIG = 1 << 63


def same(text: str) -> str:
    return text


def as_dict(v: Any) -> dict:
    if not isinstance(v, dict):
        raise TypeError("expected an object")
    return v


def as_list(v: Any) -> list:
    if not isinstance(v, list):
        raise TypeError("expected a list")
    return v


def as_text(v: Any, limit: int = 20_000) -> str:
    if not isinstance(v, str):
        raise TypeError("expected a string")
    return v[:limit]


def as_number(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("expected a number")
    return v


def one_of(v: Any, allowed: tuple[str, ...]) -> str:
    if v not in allowed:
        raise TypeError(f"expected one of {allowed}")
    return v


def as_bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise TypeError("expected true or false")
    return v


def as_int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or abs(v) >= _BIG:
        raise TypeError("expected an integer")
    return v


def as_line(v: Any) -> int | None:
    return None if v is None else as_int(v)
