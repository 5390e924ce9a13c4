"""``pytorch-tutor --module ID`` / ``--drill [MODULE/]ID`` open the app there, validated like plain mode's."""

from __future__ import annotations

import pytest

from tests.ui.conftest import SIZE, settle
from tutor.app.app import TutorApp
from tutor.app.screens.drill import DrillScreen
from tutor.app.screens.map import MapScreen
from tutor.app.screens.self_check import SelfCheckScreen
from tutor.cli import main


async def test_the_app_opens_at_the_named_drill_instead_of_resuming(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    app.session.store.set_position("01", "transpose-strides")  # somewhere else to resume
    app.begin = app.session.start_point(drill_id="sum-dtype")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, DrillScreen) and screen.drill.id == "sum-dtype"
        assert not [n for n in app._notifications if "resuming" in n.message]  # no "Welcome back"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MapScreen)  # the map is under it, as after resuming


async def test_the_app_opens_at_a_modules_self_check(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    app.begin = app.session.start_point(drill_id="01/self-check")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, SelfCheckScreen) and app.screen.module_id == "01"


async def test_the_app_opens_a_module_at_its_first_unfinished_drill(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    app.session.store.set_position("01", "sum-dtype")
    app.begin = app.session.start_point("1")  # "1" is module 01, as in plain mode
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, DrillScreen) and app.screen.drill.id == "transpose-strides"


@pytest.fixture
def tui_run(monkeypatch, tmp_path):
    """The command line up to the app: where it would open, without taking the terminal."""
    monkeypatch.setenv("PYTORCH_TUTOR_HOME", str(tmp_path))
    opened = []

    def run(self, *args, **kwargs):
        opened.append(self.begin)

    monkeypatch.setattr(TutorApp, "run", run)
    return opened


def test_the_command_line_opens_the_app_at_a_drill_or_module(tui_run, mini_course_dir):
    base = ["--lessons", str(mini_course_dir), "--trust-lessons"]
    assert main([*base, "--drill", "01/sum-dtype"]) == 0
    assert main([*base, "--module", "01"]) == 0
    assert main([*base, "--drill", "01/self-check"]) == 0
    assert tui_run == [("01", "sum-dtype"), ("01", "transpose-strides"), ("01", "self-check")]


@pytest.mark.parametrize("args, said", [
    (["--drill", "no-such-drill"], "there is no drill 'no-such-drill' in this course"),
    (["--module", "99"], "there is no module '99' in this course"),
    (["--module", "02"], "module 02 is locked: needs 01"),
    (["--drill", "02/view-error"], "module 02 is locked: needs 01"),
    (["--module", "03"], "module 03 is coming"),
    (["--module", "01", "progress"], "not with `progress`"),
])
def test_the_command_line_refuses_what_the_app_cannot_open(tui_run, mini_course_dir, capsys, args, said):
    assert main(["--lessons", str(mini_course_dir), "--trust-lessons", *args]) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert tui_run == []  # refused before the app takes the screen
