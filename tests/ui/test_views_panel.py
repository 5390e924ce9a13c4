"""Views in the real app: the drill's declared views after the reveal only, and ctrl+l on any name.

Flows run on the scripted sandbox (``tests/scripted_sandbox.py``); the whole path runs once
on the real sandbox too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.conftest import SIZE, settle, text_of, type_into
from tutor.app.screens.drill import DrillScreen
from tutor.app.widgets.view_prompt import ViewPrompt

VIEWS_COURSE = Path(__file__).parents[1] / "fixtures" / "views_course"


@pytest.fixture(params=["scripted", pytest.param("real", marks=pytest.mark.slow)])
def either_sandbox(request):
    return None if request.param == "scripted" else request.getfixturevalue("real_sandbox")


def screen_text(app) -> str:
    return "\n".join(text_of(w) for w in app.screen.query("Static"))


async def open_view(app, pilot, typed: str, names: tuple[str, ...] = ()) -> str:
    await pilot.press("ctrl+l")
    await pilot.pause()
    assert isinstance(app.screen, ViewPrompt)
    if names:  # the prompt lists the names the code binds (issue 36 item 9)
        listed = text_of(app.screen.query_one("#view-names"))
        assert all(name in listed for name in names), listed
    await type_into(pilot, "#view-name", typed)
    await pilot.press("enter")
    await settle(app, pilot)
    return text_of(app.screen.query_one("#view"))


async def test_views_appear_after_the_reveal_and_any_name_can_be_viewed(make_app, either_sandbox):
    app = make_app(VIEWS_COURSE, sandbox=either_sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        assert isinstance(app.screen, DrillScreen)
        # before the reveal: no view anywhere, and ctrl+l says when it opens
        assert "Storage under" not in screen_text(app)
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert not isinstance(app.screen, ViewPrompt)
        assert not app.screen.query_one("#view").has_class("-shown")

        await type_into(pilot, "#ask-0", "(3, 1)")
        await pilot.press("enter")
        await settle(app, pilot)
        result = text_of(app.screen.query_one("#result"))
        assert "Storage under y: 6 cells of float32" in result  # the ask's view of its first name
        assert "y float32: shape (3, 2), stride (1, 3)" in result
        assert "Autograd graph from loss" in result and "AccumulateGrad: leaf w (3,)" in result
        assert "Registered model model: Linear" in result and "Registered parameters no group holds: bias" in result

        # ctrl+l: a view of any name, each kind
        shown = await open_view(app, pilot, "storage x")
        assert "Storage under x" in shown and "also reached by y" in shown
        shown = await open_view(app, pilot, "graph w")
        assert "A leaf: a leaf that requires grad" in shown
        shown = await open_view(app, pilot, "module model opt")
        assert "weight (1, 3) float32, requires grad, in optimizer group 0" in shown
        assert app.session.store.attempts()[-1].kind == "prediction"  # a view records nothing

        # a name the code does not bind, and a request that cannot be read
        shown = await open_view(app, pilot, "graph nope")
        assert "`nope` is not bound" in shown
        await pilot.press("ctrl+l")
        await pilot.pause()
        await type_into(pilot, "#view-name", "loss")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ViewPrompt)
        assert "storage y" in text_of(app.screen.query_one("#view-problem"))
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DrillScreen)


async def test_an_experiment_views_the_edited_code(make_app):
    app = make_app(VIEWS_COURSE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await type_into(pilot, "#ask-0", "(1, 3)")
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("ctrl+e")
        await pilot.pause()
        editor = app.screen.query_one("#editor")
        editor.text = editor.text.replace("y = x.t()", "y = x.t().contiguous()")
        shown = await open_view(app, pilot, "storage y")
        assert "no other name shares it" in shown and "stride (2, 1)" in shown


async def test_a_lab_opens_a_view_of_any_name_once_a_check_has_run(make_app, mini_course_dir):
    from textual.widgets import TextArea

    from tutor.app.screens.exercise import ExerciseScreen

    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("04", "write-relu")
        await pilot.pause()
        assert isinstance(app.screen, ExerciseScreen)
        await pilot.press("ctrl+l")  # no check has run yet: it says when views open
        await pilot.pause()
        assert not isinstance(app.screen, ViewPrompt)

        app.screen.query_one("#editor", TextArea).text = "def relu(x):\n    return x.clamp(min=0)\n"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert "All checks pass" in text_of(app.screen.query_one("#result"))
        attempts = len(app.session.store.attempts())

        shown = await open_view(app, pilot, "storage out", names=("out", "relu"))  # `out`: bound by the lab's probe
        assert "Storage under out: 3 cells of float32" in shown
        assert "also reached by" not in shown  # clamp made a new tensor: x's storage is not out's
        assert "A view is not an attempt" in text_of(app.screen.query_one("#status"))
        assert len(app.session.store.attempts()) == attempts  # a view records nothing
        shown = await open_view(app, pilot, "graph nope")
        assert "`nope` is not bound" in shown
