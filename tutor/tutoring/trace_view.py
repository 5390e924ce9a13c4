"""A traced run as the learner sees it: one row per line that changed a tensor, what changed marked.

Neutral like ``presentation.py``: :func:`trace_blocks` turns a :class:`TraceReport` into a
:class:`TraceTable` (cells with a "changed" flag, against the previous row of the same
name, and the first failing line marked); the TUI draws it with Rich
(``tutor.app.widgets.trace_panel``), plain mode and ``pytorch-tutor run --trace`` with
:func:`trace_lines`. Every string from the snippet is inert already (``read_observation``
cleaned it) and is passed through ``inert`` again here on its way out.
"""

from __future__ import annotations

from dataclasses import dataclass

from tutor.judge.contracts import Failure, iteration_text, number_text, place
from tutor.safe_text import inert
from tutor.wording import count
from tutor.sandbox.wire import ErrorInfo
from tutor.sandbox.wire.trace import MAX_TRACE_ROWS, TensorState, Trace, TraceRow


@dataclass(frozen=True)
class TraceReport:
    """A traced run's rows, the first failing one (a first-divergence drill), and what was cut."""

    rows: tuple[TraceRow, ...]
    cut: int = 0
    first: Failure | None = None
    problem: str = ""  # the run could not be traced
    until: int | None = None  # a bisection hint: only rows up to this line, before the failing one
    raised: str = ""  # where the code raised and what, e.g. "line 6 (iteration 3): ZeroDivisionError: …"

    def upto(self, line: int) -> "TraceReport":
        """The rows up to ``line`` and before the first failing row: a hint may show them."""
        stop = self.first.row if self.first is not None and self.first.row is not None else len(self.rows)
        rows = tuple(r for r in self.rows[:stop] if r.line <= line)
        return TraceReport(rows, 0, None, self.problem, line)


def trace_report(trace: Trace | None, first: Failure | None = None, error: ErrorInfo | None = None) -> TraceReport | None:
    """``error``: what the traced code raised, if it did (said after the last row, with the loop's pass)."""
    if trace is None:
        return None
    raised = ""
    if error is not None and error.phase == "code" and error.line:
        raised = f"{place(error.line, '', trace.raised_in)}: {error.type}: {error.message}"
    return TraceReport(tuple(trace.rows), trace.cut, first, trace.problem, raised=raised)


@dataclass(frozen=True)
class Cell:
    label: str
    text: str
    changed: bool = False


@dataclass(frozen=True)
class TraceEntry:
    """One name on one row."""

    line: int
    scope: str
    name: str
    cells: tuple[Cell, ...]
    failing: str = ""  # the first failure's text, on the row and name where it happened
    first_of_row: bool = True
    iteration: tuple[int, ...] = ()  # inside a top-level loop: its pass (1-based), and each nested loop's

    @property
    def short_place(self) -> str:
        """The row's place in a narrow column: ``5``, ``3 step``, ``6 #2`` (a loop's 2nd pass), ``setup``."""
        if self.line == 0:
            return "setup"
        loop = " #" + ".".join(map(str, self.iteration)) if self.iteration else ""
        return f"{self.line}" + (f" {self.scope}" if self.scope else "") + loop

    @property
    def place(self) -> str:
        """``line 6 in step``, ``line 6 (iteration 2)``, ``after setup``."""
        if self.line == 0:
            return "after setup"
        return f"line {self.line}" + (f" in {self.scope}" if self.scope else "") + (
            f" ({iteration_text(self.iteration)})" if self.iteration else "")


@dataclass(frozen=True)
class TraceTable:
    entries: tuple[TraceEntry, ...]
    notes: tuple[str, ...] = ()  # cut rows, a bisection limit, why there is nothing to show


def _number(v: float | None) -> str:
    return number_text(v, 4)


def _cells(s: TensorState) -> list[Cell]:
    if s.kind != "tensor":
        shown = _number(s.value) if s.value is not None else "…"
        return [Cell("value", f"{shown} ({inert(s.type)})")]
    dims = ", ".join(map(str, s.shape or ()))
    cells = [Cell("shape", f"[{dims}]"), Cell("dtype", inert(s.dtype.removeprefix("torch.")))]
    if s.device != "cpu":
        cells.append(Cell("device", inert(s.device)))
    cells.append(Cell("stride", "(" + ", ".join(map(str, s.stride)) + ")" if s.stride is not None else inert(s.layout)))
    cells.append(Cell("offset", str(s.offset) if s.offset is not None else "—"))
    cells.append(Cell("shares", ", ".join(inert(n) for n in s.shares) or "—"))
    cells.append(Cell("version", str(s.version) if s.version is not None else "—"))
    cells.append(Cell("requires_grad", "yes" if s.requires_grad else "no"))
    cells.append(Cell("grad_fn", inert(s.grad_fn) if s.grad_fn else "—"))
    cells.append(Cell("leaf", "yes" if s.is_leaf else "no"))
    if s.has_grad:
        cells.append(Cell("grad", "set"))
    cells += [Cell("min", _number(s.min)), Cell("max", _number(s.max)), Cell("mean", _number(s.mean))]
    if s.nan:
        cells.append(Cell("nan", str(s.nan)))
    if s.inf:
        cells.append(Cell("inf", str(s.inf)))
    return cells


def trace_blocks(report: TraceReport) -> TraceTable:
    """The rows as a table: each name's cells, changed ones flagged, the first failure marked."""
    previous: dict[tuple[str, str], dict[str, str]] = {}
    entries: list[TraceEntry] = []
    first = report.first
    for index, row in enumerate(report.rows):
        first_of_row = True
        for state in row.names:
            cells = _cells(state)
            before = previous.get((row.scope, state.name))
            marked = tuple(Cell(c.label, c.text, before is not None and before.get(c.label) != c.text) for c in cells)
            previous[(row.scope, state.name)] = {c.label: c.text for c in cells}
            failing = first.text if first is not None and first.row == index and first.name == state.name else ""
            entries.append(TraceEntry(row.line, inert(row.scope), inert(state.name), marked, failing, first_of_row,
                                      row.iteration))
            first_of_row = False
        for name, result in row.holds:
            failing = first.text if first is not None and first.row == index and first.name == name else ""
            entries.append(TraceEntry(row.line, inert(row.scope), inert(name), (Cell("holds", inert(result)),),
                                      failing, first_of_row, row.iteration))
            first_of_row = False
        if row.gone:
            entries.append(TraceEntry(row.line, inert(row.scope), ", ".join(inert(g) for g in row.gone),
                                      (Cell("deleted", "yes"),), "", first_of_row, row.iteration))
        if row.more:
            entries.append(TraceEntry(row.line, inert(row.scope), "…", (Cell("more", f"{row.more} more names"),),
                                      "", False, row.iteration))
    notes = []
    if report.problem:
        notes.append(inert(report.problem))
    elif not report.rows:
        notes.append("No statement bound or changed a tensor." if report.until is None
                     else f"No tensor changed up to line {report.until}.")
    if report.until is not None:
        notes.append(f"The trace up to line {report.until} (a hint: the rest stays hidden).")
    if report.cut:
        notes.append(f"… the trace reached its cap ({MAX_TRACE_ROWS} rows): {count(report.cut, 'more statement')} "
                     "ran untraced after it (a loop's passes fill it fast).")
    if first is not None and not first.name:
        notes.append(f"First failure: {inert(first.text)}")
    if report.raised:  # the rows stop here: nothing after it ran
        notes.append(f"Raised at {inert(report.raised)}; nothing after it ran.")
    return TraceTable(tuple(entries), tuple(notes))


def entry_text(entry: TraceEntry) -> str:
    """``x: shape [2, 3]  dtype float32 …`` with ``*`` after each changed field."""
    parts = [f"{c.label} {c.text}{'*' if c.changed else ''}" for c in entry.cells]
    return f"{entry.name}: " + "  ".join(parts)


def trace_lines(report: TraceReport) -> list[str]:
    """The trace as plain text: a line per name, grouped by the code's line; ``*`` marks a changed field."""
    table = trace_blocks(report)
    out = ["Trace (one row per line that changed a tensor; * = changed since that name's last row):"]
    for entry in table.entries:
        where = entry.place
        lead = f"  {where:<13} " if entry.first_of_row else " " * 16
        lead = lead if len(lead) <= 16 else f"  {where} "
        out.append(f"{lead}{entry_text(entry)}")
        if entry.failing:
            out.append(f"{'':16}^ first failure: {entry.failing}")
    out.extend(f"  {note}" for note in table.notes)
    return out
