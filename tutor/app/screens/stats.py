"""The stats screen: accuracy and calibration per module and concept, time, recent history."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Static

from tutor.app.widgets.footer import key_footer
from tutor.app.widgets.daily_chart import DailyChart
from tutor.progress.stats import (BRIER_GLOSS, DAYS, THINKING_TIME, WEAKEST_GLOSS, format_duration, history_line,
                                  weakest_lines)
from tutor.safe_text import inert


def _percent(value: float | None) -> str:
    return f"{value:.0%}" if value is not None else "—"


class StatsScreen(Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", tooltip="back to the map"),
                Binding("q", "app.pop_screen", "Back", show=False, tooltip="back to the map")]
    DEFAULT_CSS = """
    StatsScreen Static { margin: 0 1 1 1; }
    """

    def compose(self) -> ComposeResult:
        session = self.app.session
        stats = session.stats()
        yield Header()
        with VerticalScroll():
            yield Static(Text.assemble(("Thinking time: ", "bold"), format_duration(stats.total_seconds),
                                       (f" ({THINKING_TIME})", "dim"),
                                       ("\nAttempts in the last 14 days: ", "bold"), str(sum(stats.daily))),
                         id="summary")
            yield DailyChart(stats.daily, id="daily")
            yield Static(Text.assemble(("Recent predictions ", "bold"), ("(● right, ○ wrong): ", "dim"),
                                       history_line(stats.recent) or "none yet"), id="recent")
            yield Static(Text(stats.first_try_line()), id="first-try")
            yield Static(Text(stats.interview_line()), id="interviews")
            modules = Table(title="Per module", expand=True)
            for column in ("module", "drills tried", "right first try", "attempts", "time"):
                modules.add_column(column)
            for module_id, tally in stats.modules.items():
                slot = session.slot(module_id)
                # Text, not str: a Table reads a str cell as markup. The id comes from the profile (an
                # imported one may name a module this course lacks), so it is made inert like the title.
                name = Text(inert(f"{module_id} {slot.title}" if slot else module_id))
                modules.add_row(name, str(tally.drills), _percent(tally.accuracy), str(tally.attempts),
                                format_duration(tally.seconds))
            yield Static(modules, id="modules-table")
            concepts = Table(title="Per concept", expand=True)
            for column in ("concept", "drills tried", "right first try", "attempts"):
                concepts.add_column(column)
            for concept, tally in stats.concepts.items():
                concepts.add_row(Text(inert(concept)), str(tally.drills), _percent(tally.accuracy), str(tally.attempts))
            yield Static(concepts, id="concepts-table")
            weak = Text("Weakest mechanisms\n", style="bold")
            weak.append(f"{WEAKEST_GLOSS}\n", style="dim")
            weak.append("\n".join(inert(line) for line in weakest_lines(session.course, stats.weakest))
                        or "None yet: every mechanism you met is mastered, or you have not met one.")
            yield Static(weak, id="weakest")
            lines = stats.calibration_lines()
            calibration = Text("Calibration\n", style="bold")
            if not lines:
                calibration.append("No predictions with a confidence yet: choose how sure you are before you run.")
            for line in lines:
                calibration.append(line + "\n")
            if stats.brier is not None:
                calibration.append(f"Brier score {stats.brier:.3f}: {BRIER_GLOSS}")
            yield Static(calibration, id="calibration")
        yield key_footer()

    def on_mount(self) -> None:
        self.title = f"Stats — last {DAYS} days"
