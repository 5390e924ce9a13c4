"""Plain mode: a due review drill asks for recall (issue 29, section 2): nothing typed before is offered, the
explanation waits for the run, and Enter does not pass it."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone

from tutor.plain.plain_tutor import run_plain
from tutor.progress.review import Rating
from tutor.progress.store import Attempt, AttemptKind, ProfileStore
from tutor.session import Session
from tutor.tutoring.service import TutoringService

def test_plain_mode_review_of_a_due_drill_offers_nothing_from_before_and_enter_does_not_pass(
        tmp_path, mini_course, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    clock = [datetime.now(timezone.utc) - timedelta(days=3)]
    session = Session(mini_course, store, clock=lambda: clock[0])
    session.record(Attempt("01", "transpose-strides", AttemptKind.PREDICTION, False, answers={"a": "(3, 1)"}))
    session.review.review("01", "transpose-strides", "drill", Rating.Again)
    drill = session.module("01").drill("transpose-strides")
    TutoringService(session, sandbox=None).keep_answers("01", drill, {drill.asks[0].key: "(1, 3)"})  # a draft
    clock[0] = datetime.now(timezone.utc)
    out = io.StringIO()
    script = io.StringIO("\n(1, 3)\n\n:quit\n")  # Enter, then a prediction, then no confidence
    assert run_plain(session, "default", script, out, scripted_sandbox, start=("01", "transpose-strides")) == 0
    text = out.getvalue()
    assert "Due for review: predict from memory what PyTorch will do." in text
    assert "Your answer from before" not in text
    assert "No answer yet" in text  # the Enter
    assert text.index("Why:") > text.index("Running in the sandbox")  # the explanation only after the run
    assert session.review.card("01", "transpose-strides").last_review == clock[0]  # rated on the new prediction
    store.close()
