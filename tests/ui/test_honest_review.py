"""A due review item in the app asks for recall (issue 29, section 2): empty boxes, the old result and
explanation hidden, Enter on them runs and rates nothing; a new prediction is what the review is rated on."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from tests.ui.conftest import SIZE, settle, text_of, type_into
from tests.ui.test_learner_loop import open_due
from tutor.app.app import TutorApp
from tutor.app.screens.drill import DrillScreen
from tutor.app.screens.self_check import SelfCheckScreen
from tutor.app.widgets.answer_form import AnswerInput
from tutor.course.loader import load_course
from tutor.progress.review import Rating
from tutor.progress.store import Attempt, AttemptKind, ProfileStore
from tutor.session import Session


async def test_a_due_drill_opens_for_recall_and_enter_does_not_pass_it(mini_course_dir, tmp_path, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "review.sqlite")
    clock = [datetime.now(timezone.utc) - timedelta(days=3)]
    session = Session(load_course(mini_course_dir), store, clock=lambda: clock[0])
    # verified before with "(1, 3)", then missed in a review: due now, three days later
    session.record(Attempt("01", "transpose-strides", AttemptKind.PREDICTION, True, answers={"a": "(1, 3)"},
                           observed={"status": "ok", "a": "(1, 3)"}))
    session.review.review("01", "transpose-strides", "drill", Rating.Again)
    session.review.review("01", "which-copies", "self_check", Rating.Again)
    clock[0] = datetime.now(timezone.utc)
    app = TutorApp(session.course, store, session=session, start="review", sandbox=scripted_sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_due(app, pilot, "What a transpose does to strides")
        screen = app.screen
        assert isinstance(screen, DrillScreen) and screen.in_review
        assert [box.value for box in screen.query(AnswerInput)] == [""]
        assert not screen.query_one("#result").has_class("-shown")
        assert not screen.query_one("#explanation").has_class("-shown")
        assert "Due for review" in text_of(screen.query_one("#status"))
        card = session.review.card("01", "transpose-strides")
        await pilot.press("enter")  # Enter on the empty box
        await settle(app, pilot)
        assert "Due for review" in text_of(screen.query_one("#status"))
        assert session.review.card("01", "transpose-strides") == card and len(store.attempts()) == 1
        await type_into(pilot, "#ask-0", "(1, 3)")  # recalled: runs, verifies, and rates the card from it
        await pilot.press("enter")
        await settle(app, pilot)
        assert "Verified" in text_of(screen.query_one("#status"))
        assert session.review.card("01", "transpose-strides").due > clock[0]
        assert screen.query_one("#explanation").has_class("-shown")  # the explanation after the run
        await pilot.press("escape")
        await pilot.pause()
        app.action_review()
        await settle(app, pilot)
        await open_due(app, pilot, "Which of these copies?")  # shuffled: "a)" is x.clone() now
        assert isinstance(app.screen, SelfCheckScreen)
        options = text_of(app.screen.query_one("#options"))
        assert options.index("a) x.clone()") < options.index("b) x.t()")
        await type_into(pilot, "#answer", "b")  # the letter it had when first seen
        await pilot.press("enter")
        await settle(app, pilot)
        assert "x.clone()" in app.screen.query_one("#model-answer").source
        assert store.attempts()[-1].correct is False
    store.close()
