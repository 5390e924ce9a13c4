"""A chained lab in the app: its stages say whose code they are; a reset clears the last result (issue 20)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TextArea

from tests.ui.conftest import SIZE, settle, text_of
from tutor.app.screens.confirm import ConfirmScreen
from tutor.workspace import Workspace, ensure_starter

pytestmark = pytest.mark.slow

PACK = Path(__file__).resolve().parent.parent / "fixtures" / "puzzle_labs"


async def test_a_chained_lab_runs_on_the_learners_stage_and_a_reset_clears_the_result(make_app, real_sandbox):
    # The real sandbox: the run goes through the lab machinery end to end (a scripted one has no recording of it).
    app = make_app(PACK, sandbox=real_sandbox)
    eye = app.session.module("1").drill("eye")
    broken_eye = eye.solution.replace("arange(j)[:, None] == arange(j)", "arange(j) == arange(j)")
    ensure_starter(Workspace(app.profile_name, app.session.course.identity), "1", eye).write_text(broken_eye)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("1", "bincount")
        await pilot.pause()
        screen = app.screen
        bincount = screen.drill
        screen.query_one("#editor", TextArea).text = bincount.solution
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        stages = text_of(screen.query_one("#stages"))
        assert "puzzle_eye: your 1_eye.py" in stages and "puzzle_ones: the reference" in stages
        result = text_of(screen.query_one("#result"))
        assert "tests pass" in result and "✗ examples" in result  # right code, wrong earlier stage
        assert not app.session.drill_done("1", "bincount")

        # ctrl+t: the starter is back, and the last run's result no longer stands beside it
        await pilot.press("ctrl+t")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
        assert "return None" in screen.query_one("#editor", TextArea).text
        assert text_of(screen.query_one("#result")).strip() == ""
