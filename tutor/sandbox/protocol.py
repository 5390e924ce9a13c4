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
class TestSpec:
    name: str
    check: str = ""
    probe: str = ""


@dataclass(frozen=True)
class RunRequest:
    code: str
    setup: str = ""
    check: str = ""
    asks: tuple[AskSpec, ...] = ()
    timeout: float = 10.0
    probe: str = ""  # runs after the code, in the learner's process: computes what a judged check needs
    # A repair or a lab is judged: its check runs in a second, fresh process that sees only the
    # data the first one exported (see ``exchange.py``); ``Sandbox.run`` does both halves.
    judged: bool = False
    export: bool = False  # the learner's half: send every bound name back as data
    imports: str = ""  # the judge's half: the learner's exported data
    # What a lesson declares it needs beyond the default confinement, and the sandbox
    # grants exactly that: "processes" (fork, e.g. DataLoader workers; with a private
    # /dev/shm), "exec" (running programs, e.g. torch.compile's C compiler; implies
    # processes), "loopback" (TCP/UDP on a network namespace's own loopback, e.g. gloo).
    needs: tuple[str, ...] = ()
    # Labs (see ``labkit.py``). Modules importable in the sandbox, as (name, source): the course's
    # helpers, and for the learner's half the learner's other files and earlier stages; the judge's
    # half gets ``judge_modules`` instead (the helpers and the references), never the learner's code.
    modules: tuple[tuple[str, str], ...] = ()
    judge_modules: tuple[tuple[str, str], ...] = ()
    tests: tuple[TestSpec, ...] = ()  # named tests: probe in the learner's half, check in the judge's
    rules: dict | None = None  # rules on the learner's source, checked in the judge's half
    sources: tuple[tuple[str, str], ...] = ()  # the judge's half: the learner's files, as text (data)
    probe_errors: dict | None = None  # the judge's half: what each test's probe raised in the learner's
    learner_error: dict | None = None  # the judge's half: the learner's code raised this

    def to_json(self) -> bytes:
        data = asdict(self)
        data["protocol"] = PROTOCOL
        return json.dumps(data).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> "RunRequest":
        data = json.loads(raw)
        asks = tuple(AskSpec(a["key"], a["expr"], a.get("mode", "value")) for a in data.get("asks", []))
        return cls(code=data["code"], setup=data.get("setup", ""), check=data.get("check", ""), asks=asks,
                   timeout=float(data.get("timeout", 10.0)), needs=tuple(data.get("needs", ())),
                   probe=data.get("probe", ""))


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
    tests: list[TestResult] = field(default_factory=list)  # a lab's named tests, in order
    probe_errors: dict[str, ErrorInfo] = field(default_factory=dict)  # the learner's half: per test
    fingerprint: str = ""  # the learner's main file, normalised (see ``labkit.fingerprint``)


@dataclass(frozen=True)
class TestResult:
    name: str
    status: str  # passed | failed | error
    message: str = ""
    line: int | None = None  # in the test's check


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
            asks={inert(_text(k, 2000)): _ask(v) for k, v in _dict(data.get("asks", {})).items()},
            check=_one_of(data.get("check", "skipped"), ("passed", "failed", "error", "skipped")),
            check_message=inert(_text(data.get("check_message", ""))),
            variables={inert(_text(k, 200)): _value(v) for k, v in _dict(data.get("variables", {})).items()},
            fence=[inert(_text(f)) for f in _list(data.get("fence", []))],
            seconds=float(_number(data.get("seconds", 0.0))),
            tests=[_test(t) for t in _list(data.get("tests", []))[:MAX_TESTS]],
            probe_errors={inert(_text(k, 200)): _error(v) for k, v in _dict(data.get("probe_errors", {})).items()},
            fingerprint=inert(_text(data.get("fingerprint", ""), 64)),
        )
    except (TypeError, KeyError, AttributeError) as exc:
        raise BadResult(f"result is malformed: {exc}") from None


MAX_TESTS = 80


def _test(v: Any) -> TestResult:
    d = _dict(v)
    line = d.get("line")
    return TestResult(inert(_text(d["name"], 200)), _one_of(d.get("status"), ("passed", "failed", "error")),
                      inert(_text(d.get("message", ""))), None if line is None else _int(line))


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


# The one declared schema of a described value (``describe`` in the child). Every
# field is checked for its type and every string made inert; a value with a
# field that is not declared here, or of the wrong type, makes the whole result
# a ``BadResult``. What comes out is rebuilt from checked parts only, so no
# caller ever meets a forged shape (``{"type": "tensor", "shape": 5}``) or a raw
# escape sequence hidden in a payload.
_SCALAR_TYPES = {"bool", "int", "float", "str", "dtype", "device"}
_SEQUENCE_TYPES = {"tuple", "list", "set", "size"}
_CLASS_TYPES = {"module", "object", "function"}
_FLOAT_WORDS = ("nan", "inf", "-inf")
_BIG = 1 << 63
_TENSOR_FIELDS = {
    "shape": "ints", "dtype": "text", "device": "text", "layout": "text", "requires_grad": "bool",
    "is_leaf": "bool", "grad_fn": "text?", "numel": "int", "version": "int", "stride": "ints",
    "is_contiguous": "bool", "storage_offset": "int", "is_view": "bool",
}
_COMMON_FIELDS = {"type", "shares_storage_with"}


def _value(v: Any, depth: int = 0) -> dict:
    d = _dict(v)
    if depth > MAX_DEPTH:
        raise TypeError("value nested too deeply")
    t = d.get("type")
    out: dict = {"type": t}
    if t == "none":
        allowed = {"no_error", "line"}
        if "no_error" in d:
            out["no_error"] = _bool(d["no_error"])
        if "line" in d:
            out["line"] = _line(d["line"])
    elif t in _SCALAR_TYPES:
        allowed = {"value"}
        out["value"] = _scalar(t, d.get("value"))
    elif t in _SEQUENCE_TYPES:
        allowed = {"items", "truncated"}
        out["items"] = [_value(i, depth + 1) for i in _list(d.get("items", []))]
        if "truncated" in d:
            out["truncated"] = _int(d["truncated"])
    elif t == "dict":
        allowed = {"items"}
        items = []
        for pair in _list(d.get("items", [])):
            pair = _list(pair)
            if len(pair) != 2:
                raise TypeError("a dict item is a [key, value] pair")
            items.append([inert(_text(pair[0], 200)), _value(pair[1], depth + 1)])
        out["items"] = items
    elif t == "tensor":
        allowed = set(_TENSOR_FIELDS) | {"values", "grad"}
        for name, kind in _TENSOR_FIELDS.items():
            if name in d:
                out[name] = _typed(kind, d[name])
        for name in ("shape", "dtype", "device", "numel"):
            if name not in out:
                raise TypeError(f"a tensor needs {name!r}")
        if "values" in d:
            out["values"] = _nested_values(d["values"], depth + 1)
        if "grad" in d:
            grad = _value(d["grad"], depth + 1)
            if grad["type"] != "tensor":
                raise TypeError("grad must be a tensor")
            out["grad"] = grad
    elif t == "exception":
        allowed = {"name", "message", "line"}
        out["name"] = inert(_text(d.get("name"), 200))
        out["message"] = inert(_text(d.get("message", "")))
        if "line" in d:
            out["line"] = _line(d["line"])
    elif t in _CLASS_TYPES:
        allowed = {"class"}
        out["class"] = inert(_text(d.get("class", "object"), 200))
    else:
        raise TypeError(f"unknown value type {str(t)[:40]!r}")
    extra = set(d) - allowed - _COMMON_FIELDS
    if extra:
        raise TypeError(f"{t} value has undeclared fields {sorted(extra)[:5]}")
    if "shares_storage_with" in d:
        out["shares_storage_with"] = [inert(_text(n, 200)) for n in _list(d["shares_storage_with"])]
    return out


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise TypeError("expected true or false")
    return v


def _int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or abs(v) >= _BIG:
        raise TypeError("expected an integer")
    return v


def _line(v: Any) -> int | None:
    return None if v is None else _int(v)


def _float_value(v: Any) -> float | str:
    if isinstance(v, str):
        if v not in _FLOAT_WORDS:
            raise TypeError("a float is a number, 'nan', 'inf' or '-inf'")
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, int) and abs(v) >= _BIG):
        raise TypeError("expected a number")
    return v


def _scalar(t: str, v: Any) -> Any:
    if t == "bool":
        return _bool(v)
    if t == "int":
        return _int(v)
    if t == "float":
        return _float_value(v)
    return inert(_text(v))  # str, dtype, device


def _typed(kind: str, v: Any) -> Any:
    if kind == "ints":
        return [_int(i) for i in _list(v)]
    if kind == "text":
        return inert(_text(v, 200))
    if kind == "text?":
        return None if v is None else inert(_text(v, 200))
    if kind == "bool":
        return _bool(v)
    return _int(v)


def _nested_values(v: Any, depth: int) -> Any:
    """A tensor's values: nested lists of numbers, booleans and the float words (complex as text)."""
    if depth > MAX_DEPTH:
        raise TypeError("values nested too deeply")
    if isinstance(v, list):
        return [_nested_values(i, depth + 1) for i in v]
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        return inert(_text(v, 100))
    return _float_value(v)
