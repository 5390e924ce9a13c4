"""The trace's part of the wire: what a traced run is asked for, and the rows it sends back.

A traced run (``inner/trace.py``) records, after every top-level statement of the code
(and of one named function), each tensor-valued name that the statement bound or
changed. The rows travel inside the observation as typed data: :func:`read_trace` checks
every field and rebuilds the rows from checked parts, like ``values.read_value`` does
for a described value. Standard library only (both sides import it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from tutor.sandbox.wire.checks import as_bool, as_dict, as_int, as_list, as_number, as_text, same
from tutor.sandbox.wire.values import FLOAT_WORDS

MAX_TRACE_ROWS = 400  # rows a traced run sends; past it the rest are counted, not sent
MAX_TRACE_NAMES = 24  # names described in one row; past it the row says how many more changed
MAX_TRACE_BYTES = 384 << 10  # the rows' JSON; well inside the observation's 1 MiB
MAX_HOLDS = 32  # `holds:` expressions per traced run
# statements recorded per run: a loop of many passes that change no tensor makes no rows but costs
# ~20 µs a statement; past this the rest runs untraced, counted like the rows the caps cut
MAX_TRACE_STATEMENTS = 20_000
MAX_LOOP_DEPTH = 8  # nested loops a row's iteration names


@dataclass(frozen=True)
class TraceSpec:
    """What to trace: the code always; ``function`` too; ``holds`` evaluated after every row."""

    function: str = ""  # also trace the statements inside the function of this name
    holds: tuple[tuple[str, str], ...] = ()  # (name, expression): evaluated where ``name`` is bound
    watch: tuple[str, ...] = ()  # names recorded even when bound to a number or another non-tensor


@dataclass(frozen=True)
class TensorState:
    """One name's value after a statement: a tensor's layout, autograd flags and statistics."""

    name: str
    kind: str = "tensor"  # tensor | value (a watched name bound to something else)
    type: str = ""  # a value's Python type
    shape: tuple[int, ...] | None = None
    dtype: str = ""
    device: str = ""
    layout: str = ""
    stride: tuple[int, ...] | None = None  # None: not strided (sparse)
    offset: int | None = None
    shares: tuple[str, ...] = ()  # other names in scope viewing the same storage
    version: int | None = None
    requires_grad: bool = False
    grad_fn: str | None = None
    is_leaf: bool = True
    has_grad: bool = False
    min: float | None = None  # of the non-NaN values (None: not measurable: empty, meta, complex, too large)
    max: float | None = None
    mean: float | None = None
    nan: int | None = None
    inf: int | None = None
    value: float | None = None  # a watched number


@dataclass(frozen=True)
class TraceRow:
    line: int  # 1-based in the drill's code (0: after setup, before the code ran)
    scope: str = ""  # "" at top level, else the traced function's name
    iteration: tuple[int, ...] = ()  # inside a top-level loop: its pass, 1-based (and each nested loop's)
    names: tuple[TensorState, ...] = ()
    gone: tuple[str, ...] = ()  # names the statement deleted
    more: int = 0  # names changed beyond MAX_TRACE_NAMES, not described
    holds: tuple[tuple[str, str], ...] = ()  # (name, "true" | "false" | "error: ...") where it changed


@dataclass
class Trace:
    rows: list[TraceRow] = field(default_factory=list)
    cut: int = 0  # past a cap: the statements that ran after it, untraced (the first of them made the row it cut)
    problem: str = ""  # the trace itself could not be made (the code ran untraced)
    raised_in: tuple[int, ...] = ()  # the code raised inside a top-level loop: each enclosing loop's pass then


STATE_FIELDS = {
    "name": "text", "kind": "text", "type": "text", "shape": "ints?", "dtype": "text", "device": "text",
    "layout": "text", "stride": "ints?", "offset": "int?", "shares": "texts", "version": "int?",
    "requires_grad": "bool", "grad_fn": "text?", "is_leaf": "bool", "has_grad": "bool", "min": "float?",
    "max": "float?", "mean": "float?", "nan": "int?", "inf": "int?", "value": "float?",
}


def wire_float(v: float) -> float | str:
    """A float as JSON can carry it (the observation is strict JSON: no NaN)."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _field(kind: str, v: Any, clean: Callable[[str], str]) -> Any:
    if kind.endswith("?"):
        if v is None:
            return None
        kind = kind[:-1]
    if kind == "text":
        return clean(as_text(v, 200))
    if kind == "texts":
        return tuple(clean(as_text(t, 200)) for t in as_list(v)[:MAX_TRACE_NAMES])
    if kind == "ints":
        return tuple(as_int(i) for i in as_list(v)[:64])
    if kind == "int":
        return as_int(v)
    if kind == "bool":
        return as_bool(v)
    if isinstance(v, str):  # "nan", "inf", "-inf"
        if v not in FLOAT_WORDS:
            raise TypeError(f"not a number: {v[:20]!r}")
        return FLOAT_WORDS[v]
    return float(as_number(v))


def _state(v: Any, clean: Callable[[str], str]) -> TensorState:
    d = as_dict(v)
    unknown = set(d) - set(STATE_FIELDS)
    if unknown:
        raise TypeError(f"unknown trace field {sorted(unknown)[0][:40]!r}")
    return TensorState(**{k: _field(STATE_FIELDS[k], d[k], clean) for k in d})


def _row(v: Any, clean: Callable[[str], str]) -> TraceRow:
    d = as_dict(v)
    return TraceRow(line=as_int(d["line"]), scope=clean(as_text(d.get("scope", ""), 200)),
                    iteration=tuple(as_int(i) for i in as_list(d.get("iteration", []))[:MAX_LOOP_DEPTH]),
                    names=tuple(_state(s, clean) for s in as_list(d.get("names", []))[:MAX_TRACE_NAMES]),
                    gone=tuple(clean(as_text(g, 200)) for g in as_list(d.get("gone", []))[:MAX_TRACE_NAMES]),
                    more=as_int(d.get("more", 0)),
                    holds=tuple((clean(as_text(p[0], 200)), clean(as_text(p[1], 400)))
                                for p in map(as_list, as_list(d.get("holds", []))[:MAX_HOLDS])))


def read_trace(v: Any, clean: Callable[[str], str] = same) -> Trace | None:
    """A traced run's rows, checked field by field; ``TypeError`` when they are not rows."""
    if v is None:
        return None
    d = as_dict(v)
    return Trace(rows=[_row(r, clean) for r in as_list(d.get("rows", []))[:MAX_TRACE_ROWS]],
                 cut=as_int(d.get("cut", 0)), problem=clean(as_text(d.get("problem", ""))),
                 raised_in=tuple(as_int(i) for i in as_list(d.get("raised_in", []))[:MAX_LOOP_DEPTH]))


def read_spec(v: Any) -> TraceSpec | None:
    if v is None:
        return None
    d = as_dict(v)
    holds = tuple((as_text(p[0], 200), as_text(p[1], 4000)) for p in map(as_list, as_list(d.get("holds", []))))
    return TraceSpec(function=as_text(d.get("function", ""), 200), holds=holds[:MAX_HOLDS],
                     watch=tuple(as_text(w, 200) for w in as_list(d.get("watch", []))[:MAX_TRACE_NAMES]))
