"""The stats screen's activity chart: attempts per day, with axes and labels (textual-plotext)."""

from __future__ import annotations

from datetime import date, timedelta

from textual_plotext import PlotextPlot


def day_labels(days: int, today: date) -> list[str]:
    """``dd/mm`` for each of the last ``days`` days, oldest first (today last)."""
    return [(today - timedelta(days=n)).strftime("%d/%m") for n in range(days - 1, -1, -1)]


class DailyChart(PlotextPlot):
    """A bar per day: how many answers and runs the learner made."""

    DEFAULT_CSS = """
    DailyChart { height: 14; margin: 0 1; }
    """

    def __init__(self, daily: list[int], today: date | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.daily = list(daily)
        self.labels = day_labels(len(self.daily), today or date.today())

    def on_mount(self) -> None:
        super().on_mount()
        plt = self.plt
        plt.clear_figure()
        plt.bar(self.labels, self.daily, marker="hd")
        plt.title(f"Attempts per day, last {len(self.daily)} days")
        plt.xlabel("day")
        plt.ylabel("attempts")
        top = max(self.daily, default=0)
        if top <= 5:  # whole numbers on the axis, not 0.5 steps
            plt.yticks(list(range(top + 1)))
        self.refresh()
