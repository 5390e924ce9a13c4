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


def test_count_ticks_are_whole_numbers_and_labels_fit_the_width():
    from tutor.app.widgets.daily_chart import count_ticks, label_every

    assert count_ticks(37) == [0, 10, 20, 30, 40] and count_ticks(8) == [0, 2, 4, 6, 8]
    assert count_ticks(3) == [0, 1, 2, 3] and count_ticks(0) == [0, 1]
    assert label_every(14, 118) == 1 and label_every(14, 78) == 2


async def test_at_80_columns_the_axes_read_as_counts_and_days(make_app, mini_course_dir):
    # issue 36 item 15: "37.0 30.8 24.7 …" on a count axis, and crowded, uneven day labels at 80 columns.
    app = make_app(mini_course_dir)
    for n in range(37):
        app.session.store.record(Attempt(module="01", item="sum-dtype", kind="prediction", correct=n % 2 == 0,
                                         answers={}, observed={}, verdict={}, seconds=5.0))
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(StatsScreen())
        await pilot.pause()
        chart = app.screen.query_one("#daily", DailyChart)
        drawn = chart.render().plain
        assert "37.0" not in drawn and ".0 " not in drawn and "40" in drawn
        labels = [label for label in day_labels(14, date.today()) if label in drawn]
        assert labels[-1] == date.today().strftime("%d/%m") and 5 <= len(labels) <= 8  # every other day
        summary = app.screen.query_one("#summary").render().plain
        assert "Thinking time" in summary and "runs not counted" in summary
        assert chart.region.height <= 12  # the tables start on the first screen
