"""After a run the report is on screen, not the answer boxes above it, and the next key goes somewhere useful.

Found at 80x24 in tmux: after ctrl+r the screen still showed the answer boxes; the report was below.
"""

from __future__ import annotations

import pytest
from textual.widgets import Input, TextArea

from tests.ui.conftest import settle, type_into
from textual.containers import VerticalScroll as Page  # the screen's page (tutor.app.widgets.page.Page)

SIZES = [(80, 24), (120, 40)]


def shown(screen, widget) -> bool:
    """The widget's top line is inside the page's view (all of it when it fits)."""
    page = screen.query_one(Page).region
    region = widget.region
    if region.height <= page.height:
        return page.contains_region(region)
    return page.y <= region.y < page.bottom


async def run_wrong(app, pilot) -> None:
    app.open_item("01", "sum-dtype")
    await pilot.pause()
    await pilot.press(*"float32", "enter", *"6")  # a wrong dtype (a misconception), a right sum
    await pilot.press("ctrl+r")
    await settle(app, pilot)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("right_first", [False, True], ids=["first-run", "after-a-shorter-report"])
async def test_the_report_is_scrolled_into_view_after_a_run(make_app, mini_course_dir, size, right_first):
    app = make_app(mini_course_dir)
    async with app.run_test(size=size) as pilot:
        if right_first:  # verified (a short report), then another answer tried: a longer report in its place
            app.open_item("01", "sum-dtype")
            await pilot.pause()
            await pilot.press(*"int64", "enter", *"6", "enter")
            await settle(app, pilot)
            await type_into(pilot, "#ask-0", "float32")
            await pilot.press("ctrl+r")
            await settle(app, pilot)
        else:
            await run_wrong(app, pilot)
        screen = app.screen
        for part in ("#status", "#result"):
            widget = screen.query_one(part)
            assert shown(screen, widget), (part, widget.region, screen.query_one(Page).region)


async def test_typing_replaces_the_wrong_answer_also_in_the_box_enter_ran_from(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_item("01", "sum-dtype")
        await pilot.pause()
        await pilot.press(*"int64", "enter", *"7", "enter")  # the second answer wrong, and Enter ran from its box
        await settle(app, pilot)
        box = app.screen.query_one("#ask-1", Input)
        assert app.screen.focused is box
        await pilot.press("6")
        assert box.value == "6"


@pytest.mark.parametrize("size", SIZES)
async def test_after_a_wrong_prediction_typing_replaces_it_and_brings_its_box_back(make_app, mini_course_dir, size):
    app = make_app(mini_course_dir)
    async with app.run_test(size=size) as pilot:
        await run_wrong(app, pilot)
        screen = app.screen
        box = screen.query_one("#ask-0", Input)
        assert screen.focused is box  # the wrong one, not the last box typed in
        await pilot.press(*"int64")
        await pilot.pause()
        assert box.value == "int64"  # typed over the wrong answer, not after it
        assert shown(screen, box)
        await pilot.press("enter")  # the other box is filled: Enter runs again
        await settle(app, pilot)
        assert [a.correct for a in app.session.store.attempts()] == [False, True]
        assert shown(screen, screen.query_one("#result"))


async def test_after_a_right_prediction_the_page_has_the_focus(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_item("01", "sum-dtype")
        await pilot.pause()
        await pilot.press(*"int64", "enter", *"6", "enter")
        await settle(app, pilot)
        screen = app.screen
        page = screen.query_one(Page)
        assert screen.focused is page  # arrows and PageDown read the report; no box typed into unseen
        before = page.scroll_y
        await pilot.press("pagedown")
        await pilot.pause()
        assert page.scroll_y >= before
        assert shown(screen, screen.query_one("#result")) or page.scroll_y > before


async def test_typing_in_the_editor_scrolled_away_brings_its_line_back(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await run_wrong(app, pilot)
        screen = app.screen
        await pilot.press("ctrl+e")
        await pilot.pause()
        editor = screen.query_one("#editor", TextArea)
        assert screen.focused is editor
        screen.query_one(Page).scroll_end(animate=False)
        await pilot.pause()
        assert not shown(screen, editor)
        await pilot.press("x")
        await pilot.pause()
        page = screen.query_one(Page).region
        cursor_y = editor.cursor_screen_offset.y
        assert page.y <= cursor_y < page.bottom


async def test_a_drill_opens_at_its_prompt_and_typing_brings_the_first_box_into_view(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 14)) as pilot:  # shorter than the drill: its boxes are below the fold
        app.open_item("01", "sum-dtype")
        await pilot.pause()
        screen = app.screen
        box = screen.query_one("#ask-0", Input)
        assert screen.focused is box
        assert shown(screen, screen.query_one("#prompt")) and not shown(screen, box)  # found at 80x24: prompt hidden
        await pilot.press("i")
        await pilot.pause()
        assert box.value == "i" and shown(screen, box)


async def test_after_a_free_text_self_check_the_model_answer_and_the_ratings_are_in_view(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 16)) as pilot:
        app.open_self_check("01", 0)  # a free-text question: the learner rates themself
        await pilot.pause()
        await pilot.press(*"it swaps strides", "enter")
        await settle(app, pilot)
        screen = app.screen
        assert shown(screen, screen.query_one("#rating")) and shown(screen, screen.query_one("#status"))
        assert screen.focused is screen.query_one("#rate-3")
