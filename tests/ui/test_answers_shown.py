"""What the learner sees of the judge in the real app: the cause first (issue 12, item 14)."""

from __future__ import annotations

import pytest
from textual.widgets import TextArea

from tests.ui.conftest import SIZE, settle, text_of, type_into
from tutor.app.screens.drill import DrillScreen

pytestmark = pytest.mark.slow


async def test_a_syntax_error_in_edited_code_comes_first_and_no_ask_is_evaluated(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.open_module("01")
        await pilot.pause()
        assert isinstance(app.screen, DrillScreen) and app.screen.drill.id == "transpose-strides"
        await type_into(pilot, "#ask-0", "(1, 3)")
        await pilot.press("enter")
        await settle(app, pilot)

        await pilot.press("ctrl+e")
        app.screen.query_one("#editor", TextArea).text = "y = x.t(\nprint('never')\n"
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        lines = [line.strip() for line in text_of(app.screen.query_one("#result")).splitlines() if line.strip()]
        assert lines[1].startswith("The code did not compile: SyntaxError"), lines
        assert "(line 1 of the code)" in lines[1] and "<snippet>" not in lines[1]
        shown = "\n".join(lines)
        assert "not evaluated" in shown
        assert "NameError" not in shown

