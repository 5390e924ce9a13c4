"""The trace panel: every tensor after every line, drawn with Rich from the presenter's neutral table.

One row per (line, name) that a statement bound or changed; the fields that changed since
that name's previous row are highlighted, the first failing line of a first-divergence
drill is marked. What the rows say is decided in ``tutor.tutoring.trace_view``; this only
draws it, and fetches a trace through the tutoring service when the learner asks for one.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from tutor.app.widgets.page import reveal
from tutor.tutoring.trace_view import TraceReport, TraceTable, trace_blocks

NOT_YET = "The trace opens after your first prediction is checked."


def rich_trace(table: TraceTable) -> Group:
    grid = Table(expand=True, show_edge=False, pad_edge=False, title="Trace: every tensor after every line",
                 title_justify="left", caption="highlighted: changed since that name's previous row; #N: a loop's Nth pass")
    grid.add_column("line", width=12, no_wrap=True)
    grid.add_column("name", ratio=1, no_wrap=True)
    grid.add_column("state", ratio=6)
    for entry in table.entries:
        where = Text(entry.short_place, style="bold" if entry.failing else "")
        if entry.failing:
            where = Text("▶ ", style="bold red") + where
        state = Text()
        for i, cell in enumerate(entry.cells):
            if i:
                state.append("  ")
            state.append(f"{cell.label} ", style="dim")
            state.append(cell.text, style="bold reverse yellow" if cell.changed else "")
        if entry.failing:
            state.append(f"\nfirst failure: {entry.failing}", style="bold red")
        grid.add_row(where if entry.first_of_row else Text(""), Text(entry.name, style="bold red" if entry.failing
                                                                   else "bold"), state)
    notes = [Text(note, style="dim") for note in table.notes]
    return Group(grid, *notes)


class TracePanel(Static):
    """Shows a traced run; hidden until there is one, toggled by the screen's trace key."""

    DEFAULT_CSS = """
    TracePanel {
        height: auto;
        border: round $secondary;
        padding: 0 1;
        display: none;
    }
    TracePanel.-shown {
        display: block;
    }
    """

    report: TraceReport | None = None
    source: str | None = None  # the code the shown trace is of (None: the drill's own)

    def show_trace(self, report: TraceReport, source: str | None = None, scroll: bool = True) -> None:
        self.report, self.source = report, source
        self.update(rich_trace(trace_blocks(report)))
        self.add_class("-shown")
        if scroll:
            reveal(self)

    def hide(self) -> None:
        self.remove_class("-shown")

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")

    def fetch(self, service, drill, code: str | None = None, until: int | None = None, scroll: bool = True) -> None:
        """Trace ``code`` (the drill's when None) in a worker and show it; ``until``: a bisection hint's rows."""
        self.source = code  # what it will show: a second fetch of the same code is not asked for meanwhile
        self.run_worker(self._fetch(service, drill, code, until, scroll), group="trace", exclusive=True,
                        exit_on_error=False)

    async def _fetch(self, service, drill, code: str | None, until: int | None, scroll: bool = True) -> None:
        self.update(Text("Tracing in the sandbox…", style="dim"))
        self.add_class("-shown")
        try:
            report = await service.trace(drill, code, until)
        except Exception as exc:  # noqa: BLE001 - the learner sees a message, never a traceback
            self.update(Text(f"The trace could not be made: {type(exc).__name__}", style="red"))
            return
        self.show_trace(report, code, scroll=scroll)
