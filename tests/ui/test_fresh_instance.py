"""The drill screen on a drill with variants (issue 29 §2): a wrong prediction shows the observation and the
explanation; Enter again on that instance runs nothing; F5 opens a fresh instance (other sizes, empty boxes,
nothing of the last one on screen), and a right prediction of it verifies the drill."""

from __future__ import annotations

from tests.ui.conftest import SIZE, settle
from tests.unit.test_variant_instances import COURSE, SumSandbox, right_answer
from tutor.app.app import TutorApp
from tutor.app.screens.drill import NOT_YET_FRESH, STATUS, DrillScreen
from tutor.course.loader import load_course
from tutor.progress.store import ProfileStore
from tutor.tutoring.states import Outcome


class AppSumSandbox(SumSandbox):
    tier = "test"
    on_note = None


def status(app) -> str:
    return app.screen.status_text


async def test_a_wrong_answer_then_f5_gives_a_fresh_instance_whose_right_prediction_verifies(tmp_path):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    sandbox = AppSumSandbox()
    app = TutorApp(load_course(COURSE), store, sandbox=sandbox)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            app.open_item("01", "sum-count")
            await settle(app, pilot)
            first = app.screen
            assert isinstance(first, DrillScreen) and first.drill.instance
            await pilot.press(*"999", "enter")
            await settle(app, pilot)
            assert status(app) == NOT_YET_FRESH
            assert first.query_one("#explanation").has_class("-shown")
            await pilot.press("enter")  # again on the instance whose answer is on screen: nothing runs
            await settle(app, pilot)
            assert status(app) == STATUS[Outcome.FRESH_INSTANCE] and len(sandbox.requests) == 1

            await pilot.press("f5")
            await settle(app, pilot)
            fresh = app.screen
            assert isinstance(fresh, DrillScreen) and fresh is not first
            assert fresh.drill.instance != first.drill.instance
            assert fresh.query_one("#ask-0").value == ""
            assert not fresh.query_one("#explanation").has_class("-shown")
            assert "fresh instance" in status(app)
            await pilot.press(*right_answer(fresh.drill), "enter")
            await settle(app, pilot)
            assert status(app) == STATUS[Outcome.VERIFIED]
            assert app.session.drill_done("01", "sum-count")
    finally:
        store.close()
