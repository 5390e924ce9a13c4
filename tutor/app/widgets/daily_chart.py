"""The stats screen's activity chart: attempts per day, with axes and labels (textual-plotext)."""

from __future__ import annotations

from datetime import date, timedelta

from textual_plotext import PlotextPlot


def count_ticks(top: int, most: int = 4) -> list[int]:
    """Whole-number ticks at a round step (1, 2, 5, 10, 20, 25, 50, …) from 0 past ``top``, at most
    ``most`` steps (attempts are counts: plotext's own ticks read 37.0 30.8 24.7 …)."""
    if top <= 0:
        return [0, 1]
    scale = 1
    while True:
        for step in (scale, 2 * scale, 5 * scale, 10 * scale, 25 * scale if scale >= 10 else 10 * scale):
            if step * most >= top:
                return list(range(0, top + step, step)) if top % step else list(range(0, top + 1, step))
        scale *= 10


def label_every(days: int, width: int) -> int:
    """Label every k-th day so the labels ("dd/mm" and a gap, 7 columns) fit the plot's width,
    evenly spaced from today backwards."""
    room = max(1, (width - 8) // 7)  # the y axis and its numbers take about 8 columns
    return max(1, -(-days // room))


def day_labels(days: int, today: date) -> list[str]:
    """``dd/mm`` for each of the last ``days`` days, oldest first (today last)."""
    return [(today - timedelta(days=n)).strftime("%d/%m") for n in range(days - 1, -1, -1)]


class DailyChart(PlotextPlot):
    """A bar per day: how many answers and runs the learner made."""

    DEFAULT_CSS = """
    DailyChart { height: 12; margin: 0 1; }
    """

    def __init__(self, daily: list[int], today: date | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.daily = list(daily)
        self.labels = day_labels(len(self.daily), today or date.today())

    def on_mount(self) -> None:
        super().on_mount()
        self._draw()

    def on_resize(self) -> None:
        self._draw()  # which days are labelled depends on the width

    def _draw(self) -> None:
        plt = self.plt
        plt.clear_figure()
        days = list(range(len(self.daily)))
        plt.bar(days, self.daily, marker="hd")
        plt.title(f"Attempts per day, last {len(self.daily)} days")
        plt.xlabel("day")
        plt.ylabel("attempts")
        every = label_every(len(days), self.size.width or 80)
        shown = days[::-1][::every][::-1]  # today always labelled, the others at even steps back from it
        plt.xticks(shown, [self.labels[d] for d in shown])
        plt.yticks(count_ticks(max(self.daily, default=0)))
        self.refresh()
