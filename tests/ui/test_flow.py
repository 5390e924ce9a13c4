"""The whole learner path through the real app: map → drills → self-check → unlock → resume.

Flows run on the scripted sandbox (real results, replayed: ``tests/scripted_sandbox.py``); the
whole path also runs once on the real sandbox, and so do the tests about runs themselves (a
snippet that hangs, a snippet killed when the learner leaves).
"""

from __future__ import annotations

import os
import shutil

import pytest
from textual.command import CommandList
from textual.widgets import Input, OptionList, TextArea

from tests.ui.conftest import SIZE, settle, text_of, type_into, option_texts
from tutor.app.screens.drill import AnswerInput, DrillScreen
from tutor.app.screens.help import HelpScreen
from tutor.app.screens.map import MapScreen
from tutor.app.screens.self_check import SelfCheckScreen
from tutor.course.graph import Status
from tutor.judge import expected_form



def status_text(app) -> str:
    return text_of(app.screen.query_one("#status"))


@pytest.fixture(params=["scripted", pytest.param("real", marks=pytest.mark.slow)])
def either_sandbox(request):
    """The scripted sandbox, and (slow) the session's real one: the same flow must pass on both."""
    return None if request.param == "scripted" else request.getfixturevalue("real_sandbox")


async def test_map_to_done_unlocks_and_relaunch_resumes(make_app, mini_course_dir, either_sandbox):
    app = make_app(mini_course_dir, sandbox=either_sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, MapScreen)
        listing = app.screen.query_one("#modules", OptionList)
        prompts = option_texts(listing)
        assert any("02  Second steps  needs 01" in p for p in prompts)
        assert any("03  Not written yet  coming" in p for p in prompts)

        await pilot.press("enter")
        assert isinstance(app.screen, DrillScreen) and app.screen.drill.id == "transpose-strides"

        # A garbage answer is not run and not recorded; the learner gets the expected form.
        await type_into(pilot, "#ask-0", "three by one")
        await pilot.press("enter")
        await settle(app, pilot)
        assert "Nothing was run" in status_text(app)
        assert expected_form("stride") in text_of(app.screen.query_one("#ask-0", AnswerInput).problem)
        assert app.session.store.attempts() == []

        # A wrong prediction: the first divergence and the misconception are named.
        await type_into(pilot, "#ask-0", "(3, 1)")
        await pilot.press("enter")
        await settle(app, pilot)
        result = text_of(app.screen.query_one("#result"))
        assert "First divergence: stride, dim 0: you said 3, observed 1" in result
        assert "a transpose copies the data" in result
        assert "transposed" in result  # the snippet's output
        assert "swaps the strides" in text_of(app.screen.query_one("#explanation"))
        assert "Not yet" in status_text(app)

        # The hint tiers come one at a time.
        await pilot.press("ctrl+g")
        assert "Hint 1/2" in text_of(app.screen.query_one("#hints"))
        assert "Hint 2/2" not in text_of(app.screen.query_one("#hints"))
        # ... and stay: the earlier tier is still shown beside the next (issue 36 item 8)
        await pilot.press("ctrl+g", "ctrl+g")
        hints = text_of(app.screen.query_one("#hints"))
        assert "Hint 1/2" in hints and "Hint 2/2" in hints
        # past the last tier, after the reveal: not sent to an explanation already on screen
        said = [n.message for n in app._notifications]
        assert said[-1] == "All 2 hints are shown." and not any("read the explanation" in m for m in said)

        # The right prediction verifies the drill.
        await type_into(pilot, "#ask-0", "1x3")
        await pilot.press("enter")
        await settle(app, pilot)
        assert "Verified" in status_text(app)
        assert app.session.drill_done("01", "transpose-strides")

        # Change one thing and run again: the observation changes, the drill stays verified.
        await pilot.press("ctrl+e")
        editor = app.screen.query_one("#editor", TextArea)
        assert editor.has_class("-shown")
        editor.text = "y = x.t().contiguous()\n"
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert "(2, 1)" in text_of(app.screen.query_one("#result"))
        kinds = [a.kind for a in app.session.store.attempts()]
        assert kinds == ["prediction", "prediction", "experiment"]

        # Never auto-advance: the next drill needs a key.
        assert app.screen.drill.id == "transpose-strides"
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, DrillScreen) and app.screen.drill.id == "sum-dtype"
        await type_into(pilot, "#ask-0", "int64")
        await pilot.press("enter")  # moves to the empty second answer instead of running
        assert app.screen.focused is app.screen.query_one("#ask-1", Input)
        await pilot.press("6", "enter")
        await settle(app, pilot)
        assert "Verified" in status_text(app)

        await pilot.press("ctrl+n")
        assert isinstance(app.screen, SelfCheckScreen)
        await pilot.press(*"a transpose only swaps strides", "enter")
        assert "only swaps strides" in text_of(app.screen.query_one("#model-answer"))
        await pilot.press("ctrl+n")
        await pilot.press("z", "enter")
        assert "only 2 options" in text_of(app.screen.query_one("#problem"))
        await type_into(pilot, "#answer", "b")
        await pilot.press("enter")
        assert "Right." in text_of(app.screen.query_one("#model-answer"))
        assert app.session.state("01").status == Status.DONE
        assert app.session.state("02").status == Status.OPEN

        await pilot.press("ctrl+n")
        assert isinstance(app.screen, MapScreen)
        prompts = option_texts(listing)
        assert any("01  First steps  done" in p for p in prompts)
        assert any("02  Second steps  open" in p for p in prompts)

        app.open_module("02")
        await pilot.pause()
        assert isinstance(app.screen, DrillScreen) and app.screen.drill.id == "view-error"
        await pilot.press("ctrl+q")

    relaunched = make_app(mini_course_dir, sandbox=either_sandbox)
    async with relaunched.run_test(size=SIZE) as pilot:
        await settle(relaunched, pilot)
        assert isinstance(relaunched.screen, DrillScreen)
        assert (relaunched.screen.module_id, relaunched.screen.drill.id) == ("02", "view-error")
        await pilot.press("escape")
        assert isinstance(relaunched.screen, MapScreen)


async def test_repair_drill_needs_the_symptom_and_the_fix(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("02", "keepdim-bug")
        await pilot.pause()
        await pilot.press("ctrl+e")  # editing before predicting is refused
        assert not app.screen.query_one("#editor").has_class("-shown")
        await type_into(pilot, "#ask-0", "(1,)")
        await pilot.press("enter")
        await settle(app, pilot)
        assert "Now repair it" in status_text(app)
        assert not app.session.drill_done("02", "keepdim-bug")
        # the explanation names the fix: it waits until the drill is done (issue 20)
        assert not app.screen.query_one("#explanation").has_class("-shown")
        await pilot.press("ctrl+e")
        app.screen.query_one("#editor", TextArea).text = "a = torch.ones(3)\nb = a.mean(dim=0, keepdim=True)\n"
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert "does not pass yet" in status_text(app)
        app.screen.query_one("#editor", TextArea).text = "a = torch.ones(3)\nb = a.mean(dim=0)\n"
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert "Repaired" in status_text(app)
        assert "b = a.mean()" in text_of(app.screen.query_one("#solution"))
        assert app.session.drill_done("02", "keepdim-bug")
        assert "keepdim keeps the reduced dimension" in text_of(app.screen.query_one("#explanation"))


def write_course(tmp_path, mini_course_dir, drill_code: str, timeout: int = 2):
    root = tmp_path / "course"
    shutil.copytree(mini_course_dir, root)
    (root / "04_after.yaml").write_text(f"""\
format_version: 1
module: "04"
drills:
  - id: stuck
    prompt: What happens?
    code: |
{''.join('      ' + line + chr(10) for line in drill_code.splitlines())}
    ask:
      - {{kind: error}}
    timeout: {timeout}
    timeout_reason: the test needs a longer limit
    explanation: It never finishes.
    hints: [one, two]
    wrong_answers:
      - {{answer: RuntimeError, misconception: nothing}}
""")
    return root


@pytest.mark.slow
async def test_a_hanging_snippet_never_freezes_the_ui(make_app, mini_course_dir, tmp_path, real_sandbox):
    app = make_app(write_course(tmp_path, mini_course_dir, "while True:\n    pass", timeout=2), sandbox=real_sandbox)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("04", "stuck")
        await pilot.pause()
        await type_into(pilot, "#ask-0", "no error")
        await pilot.press("enter")
        await pilot.pause()
        assert "Running" in status_text(app)
        await pilot.press("ctrl+g")  # the UI still answers while the snippet spins
        assert "Hint 1/2" in text_of(app.screen.query_one("#hints"))
        await settle(app, pilot)
        assert "ran longer than its 2 s limit" in text_of(app.screen.query_one("#result"))
        assert "nothing was recorded" in status_text(app)
        assert app.session.store.attempts() == []


@pytest.mark.slow
async def test_leaving_the_screen_kills_the_running_snippet(make_app, mini_course_dir, tmp_path, real_sandbox):
    app = make_app(write_course(tmp_path, mini_course_dir, "import time\ntime.sleep(60)", timeout=60),
                   sandbox=real_sandbox)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("04", "stuck")
        await pilot.pause()
        await type_into(pilot, "#ask-0", "no error")
        await pilot.press("enter")
        for _ in range(1200):  # until the snippet's process exists (a loaded machine may take a while)
            if app.sandbox.live:
                break
            await pilot.pause(0.05)
        (group,) = app.sandbox.live
        await pilot.pause(0.5)
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, MapScreen)
        assert not app.sandbox.live
        with pytest.raises(ProcessLookupError):
            os.killpg(group, 0)


async def test_broken_module_shows_its_error_and_others_still_work(make_app, mini_course_dir, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(mini_course_dir, root)
    (root / "02_second.yaml").write_text('format_version: 1\nmodule: "02"\ndrills:\n  - id: x\n    promt: typo\n')
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.session.state("02").status == Status.BROKEN
        app.screen.show_details("02")
        details = text_of(app.screen.query_one("#details"))
        assert "02_second.yaml:5:5: drills[0].promt: unknown key" in details.replace("\n", "")
        await pilot.press("enter")
        assert isinstance(app.screen, DrillScreen)  # 01 still opens


async def test_locked_module_says_why_and_help_opens(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        app.open_module("02")
        await pilot.pause()
        assert isinstance(app.screen, MapScreen)
        assert any("needs 01" in n.message for n in app._notifications)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, MapScreen)


async def test_command_palette_jumps_to_a_module(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"First steps")
        for _ in range(600):  # until the palette's search has found the module (a worker of its own)
            results = app.screen.query(CommandList)
            if results and results.first().option_count:
                break
            await pilot.pause(0.05)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DrillScreen) and app.screen.module_id == "01"


async def test_a_broken_course_file_is_shown_not_raised(make_app, tmp_path):
    root = tmp_path / "course"
    root.mkdir()
    (root / "course.yaml").write_text("format_version: 1\ntitle: x\nmodules: [\n")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, MapScreen)
        details = text_of(app.screen.query_one("#details"))
        assert "course.yaml:" in details and "invalid YAML" in details
        await pilot.press("enter", "t", "s", "escape", "r", "escape")  # nothing to open; nothing breaks
        assert app.is_running
