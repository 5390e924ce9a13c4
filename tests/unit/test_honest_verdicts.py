"""No review, retry or test-out item is passed by pressing Enter or by re-typing what the screen showed
(issue 29, section 2), through the real tutoring service (the sandbox faked: nothing here is about it)."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone

import pytest

from tests.unit.test_tutoring_service import FakeSandbox, observed, strides
from tutor.judge import AnswerError
from tutor.progress.review import Rating
from tutor.commands.profile import print_stats
from tutor.progress.store import ATTEMPT_NOTE, Attempt, AttemptKind, ProfileStore
from tutor.session import Session
from tutor.tutoring.service import TutoringService
from tutor.tutoring.states import Outcome

LATER = timedelta(days=3)


@pytest.fixture
def clock():
    return [datetime.now(timezone.utc)]


@pytest.fixture
def session(tmp_path, mini_course, clock):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    yield Session(mini_course, store, clock=lambda: clock[0])
    store.close()


def transpose(session):
    return session.module("01").drill("transpose-strides")


async def predict(service, drill, text, shown=None):
    said = service.read_answers(drill, {drill.asks[0].key: text})
    return await service.submit_prediction("01", drill, said, 5.0, shown=shown)


async def test_a_retry_after_a_wrong_prediction_is_recorded_as_no_first_try_and_stats_say_so(session):
    drill = transpose(session)
    key = drill.asks[0].key
    service = TutoringService(session, FakeSandbox([observed({key: strides(1, 3)}), observed({key: strides(1, 3)})]))
    wrong = await predict(service, drill, "(3, 1)")
    assert wrong.outcome == Outcome.NOT_YET
    empty = await predict(service, drill, "")  # Enter on an empty box: nothing runs, nothing verifies
    assert empty.outcome == Outcome.UNREADABLE and not session.drill_done("01", drill.id)
    shown = wrong.rows[0].observed  # the observation the wrong try put on screen, re-typed
    retry = await predict(service, drill, shown)
    assert retry.outcome == Outcome.VERIFIED  # today's behaviour, without variants …
    notes = [a.verdict[ATTEMPT_NOTE] for a in session.store.attempts() if a.kind == AttemptKind.PREDICTION]
    assert notes == [{"first_try": True, "review": False}, {"first_try": False, "review": False}]
    stats = session.stats()  # … and stats say it was not a first-try verdict
    assert (stats.verified, stats.verified_first_try) == (1, 0)
    assert stats.first_try_line() == ("Verified drills: 1, 0 on the first try (0%); 1 after a wrong try showed "
                                      "the observation.")
    card = session.review.card("01", drill.id)
    assert card.due > session.review.clock()  # the copied retry did not rate the card: it comes back


async def test_a_due_drill_is_not_passed_by_enter_or_by_the_answers_a_screen_showed(session, clock):
    drill = transpose(session)
    key = drill.asks[0].key
    sandbox = FakeSandbox([observed({key: strides(1, 3)})])
    service = TutoringService(session, sandbox)
    await predict(service, drill, "(1, 3)")  # verified on the first try …
    session.review.review("01", drill.id, "drill", Rating.Again)  # … and missed since: a card is due later
    clock[0] += LATER
    assert service.in_review("01", drill) and service.present("01", drill) is drill
    before = session.review.card("01", drill.id)
    for attempt in ("", "   "):  # Enter on the empty boxes the review opens with
        report = await predict(service, drill, attempt, shown={key: ""})
        assert report.outcome == Outcome.RECALL_NEEDED and "predict from memory" in report.not_recorded
    # a front end that showed the last answers in the boxes: Enter on them is no prediction either
    report = await predict(service, drill, "(1, 3)", shown={key: "(1, 3)"})
    assert report.outcome == Outcome.RECALL_NEEDED
    assert sandbox.requests == [sandbox.requests[0]]  # none of these ran
    assert session.review.card("01", drill.id) == before and service.in_review("01", drill)
    assert len(session.store.attempts()) == 1
    # a new prediction, typed: it runs, and the review's rating comes from its judgement (wrong: Again)
    sandbox.results.append(observed({key: strides(1, 3)}))
    report = await predict(service, drill, "(3, 1)", shown={key: ""})
    assert report.outcome == Outcome.NOT_YET and report.recorded.reviewed
    card = session.review.card("01", drill.id)
    assert card.last_review == clock[0] and card.due > clock[0]
    last = session.store.attempts()[-1]
    assert last.verdict[ATTEMPT_NOTE] == {"first_try": False, "review": True}


async def test_a_due_multiple_choice_question_is_shuffled_so_its_old_letter_does_not_pass(session, clock):
    check = next(c for c in session.module("01").self_checks if c.id == "which-copies")
    service = TutoringService(session, FakeSandbox([]))
    assert service.choice_order("01", check) == (0, 1)  # as written, outside review
    written_letter = "b"  # x.clone(), the right option, as first seen
    first = await service.answer_self_check("01", check, "a", 5.0)  # missed: the card comes back
    assert first.correct is False
    clock[0] += LATER
    order = service.choice_order("01", check)
    assert order == service.choice_order("01", check) != (0, 1)  # seeded: the screen and the judge agree
    assert service.shown_options("01", check) == ("x.clone()", "x.t()")
    report = await service.answer_self_check("01", check, written_letter, 5.0)  # position memory
    assert report.correct is False and report.right_answer == "a) x.clone()"
    last = session.store.attempts()[-1]
    assert last.answers["order"] == list(order) and last.verdict["seed"] == "01/which-copies/2"
    clock[0] += LATER * 10  # due again: its own seed, and the letter shown for the right option passes
    again = service.choice_order("01", check)
    right_letter = "ab"[again.index(check.correct)]
    assert (await service.answer_self_check("01", check, right_letter, 5.0)).correct
    assert session.store.attempts()[-1].verdict["seed"] == "01/which-copies/3"


async def test_no_test_out_question_passes_on_enter(session):
    service = TutoringService(session, FakeSandbox([]))
    questions = session.placement_set("02")
    assert questions
    for question in questions:
        with pytest.raises(AnswerError):
            if question.runs_code:
                await service.answer_placement(question, {ask.key: "" for ask in question.asks})
            else:
                await service.answer_placement(question, "")
    drill_question = next(q for q in questions if q.runs_code and len(q.asks) > 1)
    first = drill_question.asks[0]
    with pytest.raises(AnswerError):  # every ask is asked: answering only the first is no answer
        await service.answer_placement(drill_question, {first.key: "int64"})
    assert service.sandbox.requests == []  # nothing ran


def test_stats_on_the_command_line_say_which_verdicts_were_first_try(session, capsys):
    for item, tries in (("transpose-strides", [False, True]), ("sum-dtype", [True])):
        for correct in tries:
            session.record(Attempt("01", item, AttemptKind.PREDICTION, correct))  # an older profile: no note
    print_stats(session, sys.stdout)
    assert ("Verified drills: 2, 1 on the first try (50%); 1 after a wrong try showed the observation."
            in capsys.readouterr().out)
