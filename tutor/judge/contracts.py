"""Contracts checked against a trace's rows, in the judge's process: where does the program first stop meaning it?

The rows are data (``wire/trace.py``); a contract on a name is checked on every row
where that name is bound or changed, in the order the rows were recorded; a ``holds:``
expression was evaluated in the sandbox and arrives as ``true``/``false``/``error``.
A shape's symbols (``[B, 3, H, W]``) bind on first sight and must agree afterwards, across
names. The code raising an exception before any contract fails is a failure too, at the
line that raised: the program stopped there. No torch here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tutor.course.divergence_fields import Contract
from tutor.sandbox.wire import ErrorInfo
from tutor.sandbox.wire.trace import TensorState, Trace

NOT_A_TENSOR = "not a tensor"


@dataclass(frozen=True)
class Failure:
    """The first row (in execution order) where a contract did not hold."""

    line: int
    name: str  # "" when the code raised
    contract: str  # the contract as written: "range [0, 1]"
    shown: str  # what the trace showed there: "img max 255.0"
    scope: str = ""
    row: int | None = None  # index into the trace's rows (None: the exception, after the last row)
    iteration: tuple[int, ...] = ()  # inside a top-level loop: which pass (1-based; nested loops too)

    @property
    def detail(self) -> str:
        """What the trace showed and the contract it broke: ``img max 255.0, contract range [0, 1]``."""
        if not self.name or self.contract.startswith("holds"):
            return self.shown
        return f"{self.shown}, contract {self.contract}"

    @property
    def where(self) -> str:
        """``line 4``, ``line 3 (in step)``, ``line 6 (iteration 3)``, ``before the code (after setup)``."""
        return place(self.line, self.scope, self.iteration)

    @property
    def text(self) -> str:
        """``line 4: img max 255.0, contract range [0, 1]``"""
        return f"{self.where}: {self.detail}"


def iteration_text(iteration: tuple[int, ...]) -> str:
    """``iteration 3`` (of a top-level loop), ``iteration 3.2`` (its pass 3, a nested loop's pass 2)."""
    return "iteration " + ".".join(map(str, iteration)) if iteration else ""


def place(line: int, scope: str = "", iteration: tuple[int, ...] = ()) -> str:
    """Where a trace row is, as feedback says it."""
    if line == 0:
        return "before the code (after setup)"
    notes = [f"in {scope}" if scope else "", iteration_text(iteration)]
    return f"line {line}" + "".join(f" ({n})" for n in notes if n)


def number_text(v: float | None, digits: int = 6) -> str:
    """A statistic as feedback and the trace show it: ``255.0``, ``0.4712``, ``nan``, ``-inf`` (``—``: none)."""
    if v is None:
        return "—"
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.1f}" if v == int(v) and abs(v) < 1e15 else f"{v:.{digits}g}"


def _shape(state: TensorState) -> str:
    return "[" + ", ".join(map(str, state.shape or ())) + "]"


def _check_shape(c: Contract, s: TensorState, symbols: dict[str, int]) -> str | None:
    if s.kind != "tensor":
        return f"{s.name} is a {s.type}, {NOT_A_TENSOR}"
    want = c.shape or ()
    got = s.shape or ()
    if len(got) != len(want):
        return f"{s.name} shape {_shape(s)} ({len(got)} dimensions, the contract has {len(want)})"
    bound: dict[str, int] = {}
    for i, (w, g) in enumerate(zip(want, got)):
        if isinstance(w, int):
            if w != g:
                return f"{s.name} shape {_shape(s)} (dimension {i} is {g}, not {w})"
            continue
        seen = bound.get(w, symbols.get(w))
        if seen is not None and seen != g:
            return f"{s.name} shape {_shape(s)} ({w} was {seen}, here it is {g})"
        bound[w] = g
    symbols.update(bound)
    return None


def _check_range(c: Contract, s: TensorState) -> str | None:
    lo, hi = c.range
    if s.nan:
        return f"{s.name} has {s.nan} NaN"
    if s.min is None or s.max is None:
        return f"{s.name} has no order (complex)" if s.dtype.startswith("torch.complex") else None
    if s.min < lo:
        return f"{s.name} min {number_text(s.min)}"
    if s.max > hi:
        return f"{s.name} max {number_text(s.max)}"
    return None


def _check_finite(c: Contract, s: TensorState) -> str | None:
    bad = (s.nan or 0) + (s.inf or 0)
    if c.finite and bad:
        parts = [f"{n} {word}" for n, word in ((s.nan, "NaN"), (s.inf, "Inf")) if n]
        return f"{s.name} has {' and '.join(parts)}"
    if c.finite is False and s.nan is not None and not bad:
        return f"{s.name} is finite"
    return None


def _check_state(c: Contract, s: TensorState, symbols: dict[str, int]) -> tuple[str, str] | None:
    """(contract facet, what was seen) of the first facet that fails, else None."""
    if c.shape is not None and (why := _check_shape(c, s, symbols)):
        return f"shape [{', '.join(map(str, c.shape))}]", why
    if c.dtype is not None and s.dtype != c.dtype:
        seen = s.dtype.removeprefix("torch.") if s.kind == "tensor" else f"a {s.type}, {NOT_A_TENSOR}"
        return f"dtype {c.dtype.removeprefix('torch.')}", f"{s.name} dtype {seen}" if s.kind == "tensor" else \
            f"{s.name} is {seen}"
    if c.requires_grad is not None and (s.kind != "tensor" or s.requires_grad != c.requires_grad):
        seen = f"requires_grad {str(s.requires_grad).lower()}" if s.kind == "tensor" else f"a {s.type}"
        return f"requires_grad {str(c.requires_grad).lower()}", f"{s.name} {seen}" if s.kind == "tensor" else \
            f"{s.name} is {seen}, {NOT_A_TENSOR}"
    if c.range is not None and (why := _check_range(c, s)):
        return f"range [{c.range[0]:g}, {c.range[1]:g}]", why
    if c.finite is not None and (why := _check_finite(c, s)):
        return "finite" if c.finite else "not finite", why
    return None


def failures(trace: Trace, contracts: tuple[Contract, ...], error: ErrorInfo | None = None,
             first_only: bool = False) -> list[Failure]:
    """Every row where a contract fails (each name once, at its first failure), then the code's exception."""
    by_name = {c.name: c for c in contracts}
    symbols: dict[str, int] = {}
    out: list[Failure] = []
    failed: set[str] = set()
    for index, row in enumerate(trace.rows):
        for state in row.names:
            c = by_name.get(state.name)
            if c is None or state.name in failed:
                continue
            found = _check_state(c, state, symbols)
            if found:
                out.append(Failure(row.line, state.name, found[0], found[1], row.scope, index, row.iteration))
                failed.add(state.name)
        for name, result in row.holds:
            c = by_name.get(name)
            if c is None or c.holds is None or result == "true" or name in failed:
                continue
            shown = f"`{c.holds}` is false" if result == "false" else f"`{c.holds}` raised {result[7:]}"
            out.append(Failure(row.line, name, f"holds `{c.holds}`", shown, row.scope, index, row.iteration))
            failed.add(name)
        if first_only and out:
            return out[:1]
    if error is not None and error.phase == "code" and error.line is not None:
        out.append(Failure(error.line, "", "", f"raised {error.type}: {error.message[:200]}"))
    return out[:1] if first_only else out


def first_failure(trace: Trace, contracts: tuple[Contract, ...], error: ErrorInfo | None = None) -> Failure | None:
    found = failures(trace, contracts, error, first_only=True)
    return found[0] if found else None
