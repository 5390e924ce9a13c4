"""A symptoms-first repair in the real app: the run's output before the answers, the source only after them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import TextArea

from tests.ui.conftest import SIZE, settle, text_of, type_into
from tutor.app.screens.drill_symptoms import READ_THEN_DIAGNOSE, RUNNING
from tutor.app.widgets.code_view import CodeView
from tutor.tutoring.symptoms import SOURCE_HIDDEN

COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "symptoms_course"
DRILL = "settles-or-not"


def status_text(app) -> str:
    return text_of(app.screen.query_one("#status"))


async def test_the_output_comes_first_and_the_source_after_the_diagnosis(make_app, make_scripted_sandbox):
    sandbox = make_scripted_sandbox()
    app = make_app(COURSE, sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        sandbox.hold = asyncio.Event()  # the symptoms run waits: what the screen shows meanwhile
        app.open_item("01", DRILL)
        await pilot.pause()
        screen = app.screen
        drill = screen.drill
        code, editor = screen.query_one("#code", CodeView), screen.query_one("#editor", TextArea)
        assert RUNNING in status_text(app) and not screen.query_one("#symptoms").has_class("-shown")
        await type_into(pilot, "#ask-0", "b")
        await pilot.press("enter", *"yes", "enter")  # before the run is back: nothing more is sent
        await pilot.pause()
        assert len(sandbox.requests) == 1 and screen.phase == "running"
        sandbox.hold.set()
        await settle(app, pilot)
        # the symptoms, and no copy of the source anywhere on the screen
        symptoms = text_of(screen.query_one("#symptoms"))
        assert SOURCE_HIDDEN in symptoms and "step 3: loss 12.330" in symptoms
        assert READ_THEN_DIAGNOSE in status_text(app)
        assert code.has_class("-empty") and code.code == "" and code.setup == "" and editor.text == ""
        await pilot.press("ctrl+e")  # no editor before the diagnosis
        assert not editor.has_class("-shown")
        screen.query_one("#ask-1").focus()
        await pilot.press("enter")  # the boxes hold b and yes: the diagnosis runs now
        await settle(app, pilot)
        assert len(sandbox.requests) == 1  # judged on the run the learner read
        result = text_of(screen.query_one("#result"))
        assert "earlier steps' gradients stay in .grad" in result and "✓" in result
        assert "Now repair it" in status_text(app)
        assert not code.has_class("-empty") and code.code == drill.code and code.setup == drill.setup
        assert not screen.query_one("#explanation").has_class("-shown")  # it names the fix: after the repair
        await pilot.press("ctrl+e")
        assert editor.has_class("-shown") and editor.text == drill.code
        editor.text = drill.solution
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert "Repaired" in status_text(app)
        assert app.session.drill_done("01", DRILL)
        assert "backward() adds into .grad" in text_of(screen.query_one("#explanation")).replace("`", "")


async def test_a_drill_diagnosed_before_shows_its_source_at_once(make_app, make_scripted_sandbox):
    sandbox = make_scripted_sandbox()
    app = make_app(COURSE, sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.open_item("01", DRILL)
        await settle(app, pilot)
        await type_into(pilot, "#ask-0", "a")
        await pilot.press("enter", *"no", "enter")  # a wrong diagnosis is a diagnosis too
        await settle(app, pilot)
        assert "Not yet" in status_text(app)
        assert app.screen.query_one("#code", CodeView).code == app.screen.drill.code
        app.back_to_map()
        await pilot.pause()
        app.open_item("01", DRILL)
        await settle(app, pilot)
        assert len(sandbox.requests) == 1  # no symptoms run again: the source is shown
        assert app.screen.query_one("#code", CodeView).code == app.screen.drill.code
        assert not app.screen.query_one("#symptoms").has_class("-shown")
