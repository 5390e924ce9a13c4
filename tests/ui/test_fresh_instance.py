"""The drill screen on a drill with variants (issue 29 §2): a wrong prediction shows the observation and the
explanation; Enter again on that instance runs nothing; F5 opens a fresh instance (other sizes, empty boxes,
nothing of the last one on screen), and a right prediction of it verifies the drill."""

from __future__ import annotations

import contextlib

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


@contextlib.asynccontextmanager
async def on_sum_count(tmp_path, sandbox):
    """The app on a fresh profile, with 01/sum-count (a drill with variants) open: (app, pilot)."""
    store = ProfileStore.open(tmp_path / "p.sqlite")
    app = TutorApp(load_course(COURSE), store, sandbox=sandbox)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            app.open_item("01", "sum-count")
            await settle(app, pilot)
            yield app, pilot
    finally:
        store.close()


async def test_a_wrong_answer_then_f5_gives_a_fresh_instance_whose_right_prediction_verifies(tmp_path):
    sandbox = AppSumSandbox()
    async with on_sum_count(tmp_path, sandbox) as (app, pilot):
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


async def test_a_weak_spot_is_woven_in_after_finished_work_and_next_goes_on_where_the_learner_was(tmp_path,
                                                                                                    monkeypatch):
    import tutor.progress.mastery as mastery
    from tutor.session import Session
    from tutor.tutoring.service import TutoringService

    monkeypatch.setattr(mastery, "WEAK_SPOT_EVERY", 1)  # one finished drill is enough here
    store = ProfileStore.open(tmp_path / "p.sqlite")
    course = load_course(COURSE)
    # before this sitting: the misconception shown on 01/sum-count, 01/plain verified
    earlier = TutoringService(Session(course, store), AppSumSandbox())
    drill = earlier.present("01", course.slot("01").module.drill("sum-count"))
    said = earlier.read_answers(drill, {drill.asks[0].key: drill.wrong_answers[0].answer})
    assert (await earlier.submit_prediction("01", drill, said, 3.0)).rows[0].misconception
    plain = course.slot("01").module.drill("plain")
    await earlier.submit_prediction("01", plain, earlier.read_answers(plain, {plain.asks[0].key: "3.0"}), 3.0)

    app = TutorApp(course, store, sandbox=AppSumSandbox())
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            app.open_item("02", "after")
            await settle(app, pilot)
            await pilot.press(*"4", "enter")
            await settle(app, pilot)
            assert status(app) == STATUS[Outcome.VERIFIED]
            await pilot.press("ctrl+n")  # finished work: the weak spot comes first, on an instance never answered
            await settle(app, pilot)
            practice = app.screen
            assert isinstance(practice, DrillScreen) and (practice.module_id, practice.drill.id) == ("01", "sum-count")
            assert practice.drill.instance != drill.instance and practice.query_one("#ask-0").value == ""
            assert any("Practice on a weak spot" in n.message for n in app._notifications)
            await pilot.press(*right_answer(practice.drill), "enter")
            await settle(app, pilot)
            await pilot.press("ctrl+n")  # then on where the learner was: the drill after 02/after
            await settle(app, pilot)
            assert (app.screen.module_id, app.screen.drill.id) == ("02", "after2")
    finally:
        store.close()


async def test_the_trace_runs_the_instance_on_screen_not_the_template(tmp_path):
    sandbox = AppSumSandbox()
    async with on_sum_count(tmp_path, sandbox) as (app, pilot):
        screen = app.screen
        await pilot.press(*right_answer(screen.drill), "enter")
        await settle(app, pilot)
        await pilot.press("f4")
        await settle(app, pilot)
        traced = [r for r in sandbox.requests if r.trace is not None]
        assert traced and traced[-1].code == screen.drill.code and "{{" not in traced[-1].code


async def test_f5_is_off_on_a_drill_with_one_instance_and_on_where_there_are_variants(tmp_path):
    """The screen's binding check: F5 (a fresh instance) only where the drill has instances to give, and the
    editing keys' own check (reset code only while editing) still applies beside it."""
    sandbox = AppSumSandbox()
    async with on_sum_count(tmp_path, sandbox) as (app, pilot):
        assert app.screen.check_action("fresh_instance", ()) is True
        app.open_item("01", "plain")
        await settle(app, pilot)
        plain = app.screen
        assert isinstance(plain, DrillScreen) and plain.drill.variants is None
        assert plain.check_action("fresh_instance", ()) is False
        assert plain.check_action("reset_code", ()) is False  # not editing
        await pilot.press("f5")  # nothing happens: the same screen, nothing run
        await settle(app, pilot)
        assert app.screen is plain and not sandbox.requests
