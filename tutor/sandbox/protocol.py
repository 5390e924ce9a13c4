"""The sandbox's wire format: a run request in, an observation out, both JSON.

The parent treats everything the child sends as hostile: the size and nesting
depth are capped before ``json.loads`` runs, and the shape of the result is
checked field by field. Nothing is ever unpickled.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from tutor.safe_text import inert

PROTOCOL = 1
MAX_RESULT_BYTES = 1 << 20
MAX_DEPTH = 24
READY = b"READY\n"


@dataclass(frozen=True)
class AskSpec:
    key: str
    expr: str | None  # None: observe the code's own exception
    mode: str = "value"  # "raises": observe the exception evaluating ``expr`` raises, or none


@dataclass(frozen=True)
class RunRequest:
    code: str
    setup: str = ""
    check: str = ""
    asks: tuple[AskSpec, ...] = ()
    timeout: float = 10.0
    # What a lesson declares it needs beyond the default confinement, and the sandbox
    # grants exactly that: "processes" (fork, e.g. DataLoader workers; with a private
    # /dev/shm), "exec" (running programs, e.g. torch.compile's C compiler; implies
    # processes), "loopback" (TCP/UDP on a network namespace's own loopback, e.g. gloo).
    needs: tuple[str, ...] = ()

    def to_json(self) -> bytes:
        data = asdict(self)
        data["protocol"] = PROTOCOL
        return json.dumps(data).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> "RunRequest":
        data = json.loads(raw)
        asks = tuple(AskSpec(a["key"], a["expr"], a.get("mode", "value")) for a in data.get("asks", []))
        return cls(code=data["code"], setup=data.get("setup", ""), check=data.get("check", ""), asks=asks,
                   timeout=float(data.get("timeout", 10.0)), needs=tuple(data.get("needs", ())))


@dataclass(frozen=True)
class ErrorInfo:
    """An exception raised by the snippet: where and what."""

    phase: str  # setup | code | check | ask
    type: str
    message: str
    line: int | None = None


@dataclass(frozen=True)
class AskResult:
    value: dict | None = None  # the described value
    error: ErrorInfo | None = None


@dataclass
class Observation:
    """What the child saw. Values are descriptions (see ``describe`` in the child)."""

    error: ErrorInfo | None = None  # the setup's or code's exception, if any
    asks: dict[str, AskResult] = field(default_factory=dict)
    check: str = "skipped"  # passed | failed | error | skipped
    check_message: str = ""
    variables: dict[str, dict] = field(default_factory=dict)
    fence: list[str] = field(default_factory=list)  # fence-rule violations
    seconds: float = 0.0


class BadResult(ValueError):
    """The child's result is not something we accept (too big, too deep, malformed)."""


def _depth_ok(raw: bytes) -> bool:
    depth = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return True


def parse_observation(raw: bytes) -> Observation:
    """Parse and validate the child's JSON; raise :class:`BadResult` on anything odd."""
    if len(raw) > MAX_RESULT_BYTES:
        raise BadResult(f"result larger than {MAX_RESULT_BYTES:,} bytes")
    if not _depth_ok(raw):
        raise BadResult(f"result nested deeper than {MAX_DEPTH} levels")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise BadResult(f"result is not valid JSON: {str(exc)[:80]}") from None
    if not isinstance(data, dict) or data.get("protocol") != PROTOCOL:
        raise BadResult("result has the wrong protocol")
    try:
        return Observation(
            error=_error(data.get("error")),
            asks={_text(k): _ask(v) for k, v in _dict(data.get("asks", {})).items()},
            check=_one_of(data.get("check", "skipped"), ("passed", "failed", "error", "skipped")),
            check_message=inert(_text(data.get("check_message", ""))),
            variables={_text(k): _value(v) for k, v in _dict(data.get("variables", {})).items()},
            fence=[inert(_text(f)) for f in _list(data.get("fence", []))],
            seconds=float(_number(data.get("seconds", 0.0))),
        )
    except (TypeError, KeyError, AttributeError) as exc:
        raise BadResult(f"result is malformed: {exc}") from None


def _dict(v: Any) -> dict:
    if not isinstance(v, dict):
        raise TypeError("expected an object")
    return v


def _list(v: Any) -> list:
    if not isinstance(v, list):
        raise TypeError("expected a list")
    return v


def _text(v: Any, limit: int = 20_000) -> str:
    if not isinstance(v, str):
        raise TypeError("expected a string")
    return v[:limit]


def _number(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("expected a number")
    return v


def _one_of(v: Any, allowed: tuple[str, ...]) -> str:
    if v not in allowed:
        raise TypeError(f"expected one of {allowed}")
    return v


def _error(v: Any) -> ErrorInfo | None:
    if v is None:
        return None
    d = _dict(v)
    line = d.get("line")
    if line is not None and (isinstance(line, bool) or not isinstance(line, int)):
        raise TypeError("line must be an int")
    # display texts: made inert here, so no caller can print a snippet's escape sequences by accident
    return ErrorInfo(inert(_text(d.get("phase", "code"), 40)), inert(_text(d["type"], 200)),
                     inert(_text(d.get("message", ""))), line)


def _ask(v: Any) -> AskResult:
    d = _dict(v)
    return AskResult(value=_value(d["value"]) if d.get("value") is not None else None, error=_error(d.get("error")))


_VALUE_TYPES = {"none", "bool", "int", "float", "str", "tuple", "list", "size", "set", "dict", "dtype", "device",
                "tensor", "exception", "module", "object", "function"}


def _value(v: Any) -> dict:
    """Check a described value's type tag; its payload is read defensively where used."""
    d = _dict(v)
    if d.get("type") not in _VALUE_TYPES:
        raise TypeError(f"unknown value type {d.get('type')!r}")
    return d
