"""A first-divergence drill driven in the real app: the answer, the feedback, the trace panel (F4), the repair."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TextArea

from tests.ui.conftest import SIZE, settle, text_of, type_into
from tutor.app.screens.drill import AnswerInput, DrillScreen
from tutor.app.widgets.trace_panel import TracePanel

COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "divergence_course"
SOLUTION = "img = raw.float() / 255\nimg = img.clamp(0, 1)\nx = img.permute(0, 3, 1, 2)\ncentered = x - 0.5\n" \
           "loss = centered.mean()\n"


@pytest.fixture(params=["scripted", pytest.param("real", marks=pytest.mark.slow)])
def either_sandbox(request):
    return None if request.param == "scripted" else request.getfixturevalue("real_sandbox")


def panel(app) -> TracePanel:
    return app.screen.query_one("#trace", TracePanel)


async def test_name_the_line_read_the_trace_then_repair(make_app, either_sandbox):
    app = make_app(COURSE, sandbox=either_sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        assert isinstance(app.screen, DrillScreen) and app.screen.drill.id == "pixel-scale"

        await pilot.press("f4")  # nothing to trace before the first prediction is checked
        await settle(app, pilot)
        assert not panel(app).shown

        await type_into(pilot, "#ask-0", "somewhere")
        await pilot.press("enter")
        await settle(app, pilot)
        assert "is not a line number" in text_of(app.screen.query_one("#ask-0", AnswerInput).problem)
        assert app.session.store.attempts() == []

        await type_into(pilot, "#ask-0", "line 4")
        await pilot.press("enter")
        await settle(app, pilot)
        result = text_of(app.screen.query_one("#result"))
        assert "You chose line 4, but a contract already fails earlier, on line 1 (stage convert)" in result
        assert "the values go wrong where they are shifted" in result
        assert panel(app).shown
        trace = text_of(panel(app))
        assert "▶ 1" in trace and "first failure: line 1: img max 255.0, contract range [0, 1]" in trace

        await pilot.press("f4")  # the key toggles it
        assert not panel(app).shown
        await pilot.press("f4")
        await settle(app, pilot)
        assert panel(app).shown and "first failure: line 1" in text_of(panel(app))

        await type_into(pilot, "#ask-0", "L1")
        await pilot.press("enter")
        await settle(app, pilot)
        assert "Right: that is the symptom" in text_of(app.screen.query_one("#status"))

        await pilot.press("ctrl+e")
        app.screen.query_one("#editor", TextArea).text = SOLUTION
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert "Repaired ✓" in text_of(app.screen.query_one("#status"))
        repaired = text_of(panel(app))
        assert "first failure" not in repaired and "centered" in repaired
        assert app.session.drill_done("01", "pixel-scale")


async def test_a_trace_until_hint_opens_the_trace_before_the_failing_row(make_app):
    app = make_app(COURSE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.open_item("01", "nan-in-step")
        await settle(app, pilot)
        await pilot.press("ctrl+g")
        await settle(app, pilot)
        assert "Read the trace up to line 2" in text_of(app.screen.query_one("#hints"))
        shown = text_of(panel(app))
        assert "norm" in shown and "scaled" not in shown and "The trace up to line 2" in shown


async def test_a_shown_trace_follows_an_edited_code_run(make_app, mini_course_dir, make_scripted_sandbox):
    # issue 36 item 2: after an edited-code run the F4 trace kept the previous run's tensors.
    sandbox = make_scripted_sandbox()
    app = make_app(mini_course_dir, sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("01", "transpose-strides")
        await pilot.pause()
        await type_into(pilot, "#ask-0", "1x3")
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("f4")
        await settle(app, pilot)
        assert panel(app).shown
        await pilot.press("ctrl+e")
        edited = app.screen.query_one("#editor", TextArea).text + "z = y.contiguous()\n"
        app.screen.query_one("#editor", TextArea).text = edited
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        traced = [r for r in sandbox.requests if r.trace is not None]
        assert traced[-1].code.endswith("z = y.contiguous()\n")  # the trace asked again, of the code that ran
        assert panel(app).shown and panel(app).source == edited
