"""The stats screen's activity chart has axes, labels and a bar for today's attempts."""

from __future__ import annotations

from datetime import date

from tests.ui.conftest import SIZE
from tutor.app.screens.stats import StatsScreen
from tutor.app.widgets.daily_chart import DailyChart, day_labels
from tutor.progress.store import Attempt


def test_day_labels_end_today():
    labels = day_labels(14, date(2026, 3, 2))
    assert len(labels) == 14 and labels[-1] == "02/03" and labels[0] == "17/02"


async def test_chart_is_labelled_and_counts_todays_attempts(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    for correct in (False, True, True):
        app.session.store.record(Attempt(module="01", item="sum-dtype", kind="prediction", correct=correct,
                                         answers={}, observed={}, verdict={}, seconds=5.0))
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(StatsScreen())
        await pilot.pause()
        chart = app.screen.query_one("#daily", DailyChart)
        assert chart.daily[-1] == 3 and sum(chart.daily) == 3
        drawn = chart.render().plain
        for label in ("Attempts per day, last 14 days", "attempts", "day", date.today().strftime("%d/%m")):
            assert label in drawn
        assert "3" in drawn  # the y axis reaches today's count
