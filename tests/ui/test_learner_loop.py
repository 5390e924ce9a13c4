"""The learner-loop screens: search, confidence, self-rating, review, stats, test-out."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest
from textual.geometry import Region
from textual.widgets import Header, Input, Markdown, OptionList, RadioButton

from tests.ui.conftest import SIZE, settle, text_of, type_into
from tutor.app.screens.drill import DrillScreen
from tutor.app.screens.map import MapScreen
from tutor.app.screens.placement import PlacementScreen
from tutor.app.screens.review import ReviewScreen
from tutor.app.screens.self_check import SelfCheckScreen
from tutor.app.screens.stats import StatsScreen
from tutor.app.widgets.code_view import CodeView
from tutor.course.graph import Status
from tutor.course.loader import load_course
from tutor.progress.store import ProfileStore
from tutor.session import Session
from tutor.app.app import TutorApp


def module_ids(app) -> list[str]:
    listing = app.screen.query_one("#modules", OptionList)
    return [listing.get_option_at_index(i).id for i in range(listing.option_count)
            if listing.get_option_at_index(i).id]


async def test_search_filters_the_map_and_typing_is_not_a_shortcut(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        await pilot.press(*"second st")  # 's' and 't' are map keys, but here they are typed
        await pilot.pause()
        assert app.screen.query_one("#search", Input).value == "second st"
        assert isinstance(app.screen, MapScreen)
        assert module_ids(app) == ["02"]
        await type_into(pilot, "#search", "")
        assert module_ids(app) == ["01", "02", "03", "04"]


async def test_confidence_is_recorded_and_a_missed_drill_becomes_a_card(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("01", "transpose-strides")
        await pilot.pause()
        await type_into(pilot, "#ask-0", "(3, 1)")
        app.screen.query_one("#confidence-3", RadioButton).value = True
        await pilot.press("enter")
        await settle(app, pilot)
        (attempt,) = app.session.store.attempts()
        assert attempt.confidence == 3 and not attempt.correct
        card = app.session.review.card("01", "transpose-strides")
        assert card is not None  # a missed drill comes back for review
        assert app.session.review.card("01", "sum-dtype") is None


async def test_free_text_self_check_asks_for_a_self_rating(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_self_check("01", 0)
        await pilot.pause()
        assert isinstance(app.screen, SelfCheckScreen)
        await pilot.press(*"it swaps strides", "enter")
        assert app.screen.query_one("#rating").has_class("-shown")
        assert app.session.review.card("01", "why-strides") is None
        await pilot.press("2")
        card = app.session.review.card("01", "why-strides")
        assert card is not None and card.last_review is not None
        assert "Noted" in text_of(app.screen.query_one("#status"))


async def open_due(app, pilot, item: str) -> None:
    """Highlight the due item ``item`` in the review list and press Enter on it."""
    listing = app.screen.query_one("#due", OptionList)
    labels = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
    listing.highlighted = next(i for i, label in enumerate(labels) if item in label)
    listing.focus()
    await pilot.press("enter")
    await pilot.pause()


async def test_review_screen_lists_due_items_and_opens_them(make_app, mini_course_dir, tmp_path, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "review.sqlite")
    clock = [datetime.now(timezone.utc) - timedelta(days=3)]
    session = Session(load_course(mini_course_dir), store, clock=lambda: clock[0])
    from tutor.progress.review import Rating
    session.review.review("01", "transpose-strides", "drill", Rating.Again)
    session.review.review("01", "which-copies", "self_check", Rating.Again)
    clock[0] = datetime.now(timezone.utc)  # three days later: both are due
    app = TutorApp(session.course, store, session=session, start="review", sandbox=scripted_sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen)
        listing = app.screen.query_one("#due", OptionList)
        assert listing.option_count == 2
        assert "2 items due" in text_of(app.screen.query_one("#review-summary"))
        await open_due(app, pilot, "Which of these copies?")  # titles and questions, not ids
        assert isinstance(app.screen, SelfCheckScreen) and app.screen.check.id == "which-copies"
        await pilot.press("escape")
        assert isinstance(app.screen, ReviewScreen)
        await open_due(app, pilot, "What a transpose does to strides")
        assert isinstance(app.screen, DrillScreen)
    store.close()


async def test_review_at_80x24_first_item_highlighted_header_shown(mini_course_dir, tmp_path, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "review.sqlite")
    clock = [datetime.now(timezone.utc) - timedelta(days=3)]
    session = Session(load_course(mini_course_dir), store, clock=lambda: clock[0])
    from tutor.progress.review import Rating
    session.review.review("01", "which-copies", "self_check", Rating.Again)
    clock[0] = datetime.now(timezone.utc)
    app = TutorApp(session.course, store, session=session, start="review", sandbox=scripted_sandbox)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        assert screen.query_one(Header).region.height >= 1 and screen.query_one(Header).region.y == 0
        summary = screen.query_one("#review-summary")
        assert summary.region.height >= 1 and "1 item due" in text_of(summary)
        label = str(screen.query_one("#due", OptionList).get_option_at_index(0).prompt)
        assert "which-copies" not in label and "Which of these copies?" in label and "days ago" in label
        await pilot.press("enter")  # the first Enter opens the first item: it is highlighted already
        await pilot.pause()
        assert isinstance(app.screen, SelfCheckScreen) and app.screen.check.id == "which-copies"
    store.close()


async def test_stats_screen_shows_accuracy_and_calibration(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("01", "transpose-strides")
        await pilot.pause()
        await type_into(pilot, "#ask-0", "1x3")
        app.screen.query_one("#confidence-2", RadioButton).value = True
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("escape")
        await pilot.press("s")
        assert isinstance(app.screen, StatsScreen)
        modules = text_of(app.screen.query_one("#modules-table"))
        assert "01 First steps" in modules and "100%" in modules
        calibration = text_of(app.screen.query_one("#calibration"))
        assert "fairly sure" in calibration and "1 answer," in calibration
        assert "●" in text_of(app.screen.query_one("#recent"))
        assert "Verified drills: 1, 1 on the first try (100%)" in text_of(app.screen.query_one("#first-try"))


# the right and a wrong answer to each placement question the mini course's 01 can give
# (every ask of a drill, one after another)
PLACEMENT_ANSWERS = {"transpose-strides": [("(1, 3)", "(3, 1)")], "sum-dtype": [("int64", "float32"), ("6", "6")],
                     "which-copies": [("b", "a")]}


async def _answer_placement(app, pilot, right: bool) -> None:
    screen = app.screen
    while screen.report is None:
        good, bad = PLACEMENT_ANSWERS[screen.questions[screen.index].item][screen.ask_index]
        await type_into(pilot, "#answer", good if right else bad)
        await pilot.press("enter")
        await settle(app, pilot)


async def test_test_out_opens_a_locked_module(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        assert app.session.state("02").status == Status.LOCKED
        app.test_out("02")
        await pilot.pause()
        assert isinstance(app.screen, PlacementScreen)
        kinds = {q.runs_code for q in app.screen.questions}
        assert kinds == {True, False}  # predictions run in the sandbox, and self-checks
        await _answer_placement(app, pilot, right=True)
        assert "3/3 right" in text_of(app.screen.query_one("#status"))
        assert app.session.state("01").status == Status.TESTED_OUT  # skipped, not done
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DrillScreen) and app.screen.module_id == "02"


async def test_failed_test_out_keeps_the_module_locked_and_says_why(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.test_out("02")
        await pilot.pause()
        await _answer_placement(app, pilot, right=False)
        results = text_of(app.screen.query_one("#results"))
        assert "✗" in results and "✓" not in results
        assert "right: b) x.clone()" in results and "you chose a)" in results
        assert "right: (1, 3)" in results and "stride, dim 0: you said 3, observed 1" in results
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MapScreen)
        assert app.session.state("02").status == Status.LOCKED


async def test_a_test_out_prediction_shows_its_question_as_the_drill_does(make_app, mini_course_dir):
    """The ask was Markdown inside "**…**": "exceed 2**24? (`big.item() - 2**24`)" lost its stars (tmux walk)."""
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.test_out("02")
        await pilot.pause()
        screen = app.screen
        for index, question in enumerate(screen.questions):
            if not question.runs_code:
                continue
            screen.index = index
            screen.show_question()
            for number, ask in enumerate(question.asks):  # every ask of the drill, one after another
                screen.ask_index = number
                screen.show_ask()
                await pilot.pause()
                shown = text_of(screen.query_one("#options"))
                assert ask.question.replace("`", "") in shown, shown
                if len(question.asks) > 1:
                    assert f"({number + 1}/{len(question.asks)})" in shown
            assert "**" not in screen.query_one("#question", Markdown).source


async def test_a_test_out_prediction_wraps_a_long_code_line_at_80_columns(make_app, mini_course_dir):
    """Its code was a Markdown fence, cut at the screen's edge on an 80-column terminal (tmux walk)."""
    long_line = "total = torch.arange(6.).reshape(2, 3).t().contiguous().sum(dim=0, keepdim=True)  # the end"
    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.test_out("02")
        await pilot.pause()
        screen = app.screen
        screen.index = next(i for i, q in enumerate(screen.questions) if q.runs_code)
        question = screen.questions[screen.index]
        screen.questions[screen.index] = replace(question, drill=replace(question.drill, code=long_line))
        screen.show_question()
        await pilot.pause()
        code = screen.query_one("#question-code", CodeView)
        assert code.display and code.size.width <= 80
        drawn = [strip.text for strip in code.render_lines(Region(0, 0, *code.outer_size))]
        ink = "".join(ch for text in drawn for ch in text if not ch.isspace() and ch not in "│╭╮╰╯─")
        assert "".join(long_line.split()) in ink, drawn  # every character of it, wrapped onto lines that fit
