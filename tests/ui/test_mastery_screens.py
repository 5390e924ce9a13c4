"""The app shows the weakest mechanisms on the map and the stats screen and offers "practise my weak spots" on the
review screen, each opening the drill like any other."""

from __future__ import annotations

from tests.mastery_history import record_history, tagged_course  # noqa: F401 (a fixture)
from tests.ui.conftest import SIZE, settle, text_of
from tutor.app.screens.drill import DrillScreen
from tutor.app.screens.review import ReviewScreen
from tutor.app.screens.stats import StatsScreen
from textual.widgets import OptionList


async def test_stats_and_review_show_the_weak_spots(make_app, tagged_course):
    app = make_app(tagged_course)
    app.session.store.use_course("mini-course")
    record_history(app.session.store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.pause()
        on_map = app.screen.query_one("#weakest")
        assert on_map.display and "still holding: sums become floats" in text_of(on_map)
        app.action_stats()
        await pilot.pause()
        assert isinstance(app.screen, StatsScreen)
        weakest = text_of(app.screen.query_one("#weakest"))
        assert "dtype: about" in weakest and "still holding: sums become floats" in weakest
        await pilot.press("escape")
        app.action_review()
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        assert "Practise my weak spots" in text_of(app.screen.query_one("#weak-summary"))
        spots = app.screen.query_one("#weak-spots", OptionList)
        assert spots.option_count == 1
        spots.focus()
        spots.highlighted = 0
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DrillScreen) and app.screen.drill.id == "sum-dtype"
