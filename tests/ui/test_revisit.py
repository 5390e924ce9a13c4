"""Coming back to a verified drill shows it verified, with the answers that did it (issue 12 item 19)."""

from __future__ import annotations

from textual.widgets import Input

from tests.ui.conftest import SIZE, settle, text_of, type_into


async def test_a_verified_drill_revisited_shows_the_last_answers_and_the_observation(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("01", "transpose-strides")
        await pilot.pause()
        await type_into(pilot, "#ask-0", "(3, 1)")
        await pilot.press("enter")
        await settle(app, pilot)
        await type_into(pilot, "#ask-0", "1x3")
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("escape")
        await pilot.pause()

        app.open_item("01", "transpose-strides")
        await pilot.pause()
        screen = app.screen
        assert "Verified" in text_of(screen.query_one("#status"))
        assert screen.query_one("#ask-0", Input).value == "1x3"  # the answer that verified it, not the miss
        result = text_of(screen.query_one("#result"))
        assert "You verified this drill" in result and "(1, 3)" in result
        assert "swaps the strides" in text_of(screen.query_one("#explanation"))
        await pilot.press("ctrl+e")  # and it can be explored again at once
        await pilot.pause()
        assert screen.query_one("#editor").has_class("-shown")
        await pilot.press("ctrl+e")
        await pilot.pause()
        await type_into(pilot, "#ask-0", "(3, 1)")  # try again: a new run, judged as any other
        await pilot.press("enter")
        await settle(app, pilot)
        assert "First divergence" in text_of(screen.query_one("#result"))
        assert len(app.session.store.attempts()) == 3
