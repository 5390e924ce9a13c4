"""Exercise drills: a starter file in the workspace, re-verified on save and on outside edits."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import TextArea

from tests.ui.conftest import SIZE, settle, text_of
from tutor.app.screens.confirm import ConfirmScreen
from tutor.app.screens.exercise import ExerciseScreen

SOLVED = "def relu(x):\n    return x.clamp(min=0)\n"


async def wait_for(pilot, condition, seconds=60.0):
    for _ in range(int(seconds / 0.1)):
        if condition():
            return True
        await pilot.pause(0.1)
    return condition()


async def test_exercise_save_verify_watch_and_reset(make_app, mini_course_dir, tutor_home):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("04", "write-relu")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ExerciseScreen)
        path = screen.path
        assert path.is_relative_to(tutor_home) and path.exists()
        assert "raise NotImplementedError" in path.read_text()
        assert "raise NotImplementedError" in screen.query_one("#editor", TextArea).text

        # A wrong solution, saved from the app: the first failing check is shown, no solution yet.
        screen.query_one("#editor", TextArea).text = "def relu(x):\n    return x\n"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        result = text_of(screen.query_one("#result"))
        assert "First failing check:" in result
        assert "negative entries must become 0" in result
        assert not screen.query_one("#solution").has_class("-shown")
        assert path.read_text() == "def relu(x):\n    return x\n"

        # The learner's own editor saves the file: the watcher re-runs the checks by itself.
        path.write_text(SOLVED)
        assert await wait_for(pilot, lambda: "All checks pass" in text_of(screen.query_one("#result")))
        await settle(app, pilot)
        assert app.session.drill_done("04", "write-relu")
        assert "x.clamp(min=0)" in text_of(screen.query_one("#solution"))
        assert screen.query_one("#editor", TextArea).text == SOLVED

        # Reset restores the starter and keeps the learner's version.
        await pilot.press("ctrl+t")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
        assert "raise NotImplementedError" in path.read_text()
        kept = list(path.parent.glob(f"{path.stem}.before-reset-*.py"))
        assert len(kept) == 1 and kept[0].read_text() == SOLVED
        assert "raise NotImplementedError" in screen.query_one("#editor", TextArea).text


async def test_exercise_crash_is_reported(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("04", "write-relu")
        await pilot.pause()
        app.screen.query_one("#editor", TextArea).text = "def relu(x):\n    return x.nope()\n"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        result = text_of(app.screen.query_one("#result"))
        assert "AttributeError" in result
        assert not app.session.drill_done("04", "write-relu")


async def test_a_lab_file_that_became_unreadable_runs_nothing_and_the_status_says_why(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("04", "write-relu")
        await pilot.pause()
        screen = app.screen
        screen.query_one("#editor", TextArea).text = "def relu(x):\n    return x\n"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert "First failing check:" in text_of(screen.query_one("#result"))
        attempts = len(app.session.store.attempts())

        # Another editor saved it in Latin-1: the service reads it, runs nothing and says what is wrong.
        screen.path.write_bytes(b"def relu(x):\n    return x  # caf\xe9\n")
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        status = text_of(screen.query_one("#status"))
        assert str(screen.path) in status.replace("\n", "") and "is not UTF-8 text" in status
        assert "First failing check:" in text_of(screen.query_one("#result"))  # the last result stands
        assert len(app.session.store.attempts()) == attempts
        assert screen.path.read_bytes().endswith(b"caf\xe9\n")  # the learner's bytes are untouched


async def test_a_lab_shows_its_rules_and_what_its_setup_gives_under_the_prompt(make_app):
    """Issue 33 item 6: the learner reads a lab's rules before breaking one, and the names its setup gives them
    (those the reference uses: the tests' `spec` is not listed)."""
    pack = Path(__file__).resolve().parents[1] / "packs" / "numpy100-torch" / "numpy100_torch"
    app = make_app(pack, watch=True)  # an author's preview: every module open
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_item("01", "moving-average")
        await pilot.pause()
        brief = text_of(app.screen.query_one("#brief"))
        assert "Rules for your file" in brief and "no for or while loops" in brief.replace("`", "")
        # the property test's machinery is not offered as the learner's (the rules forbid `spec` by name)
        assert "Given before" not in brief and "spec(" not in brief and "WINDOWS" not in brief
        assert "it may not use `spec`" in brief
