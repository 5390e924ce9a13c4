"""Interview mode's core: the staircase that picks questions, one interview judged and recorded, its debrief."""

from __future__ import annotations

import random

import pytest

from tests.unit.test_tutoring_service import FakeSandbox, observed, strides
from tutor.interview.debrief import debrief, interviews, markdown
from tutor.interview.plan import MIX, Candidate, QuestionKind, Selector, candidates, find_scope, scopes
from tutor.interview.run import Interview
from tutor.judge import AnswerError
from tutor.progress.mastery import estimate, judged
from tutor.progress.store import AttemptKind, ProfileStore
from tutor.session import Session
from tutor.tutoring.service import TutoringService


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def session(tmp_path, mini_course):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    yield Session(mini_course, store)
    store.close()


def pool(*specs) -> list[Candidate]:
    return [Candidate(module, kind, level) for module, kind, level in specs]


def test_the_staircase_goes_up_after_a_right_answer_and_down_after_a_wrong_one():
    specs = [(m, QuestionKind.PREDICT, level) for m in ("01", "02", "03") for level in (1, 2, 3) for _ in range(2)]
    items = [Candidate(m, k, lvl, check=None) for m, k, lvl in specs]
    items = [Candidate(c.module, c.kind, c.level, drill=type("D", (), {"id": f"d{i}"})()) for i, c in enumerate(items)]
    selector = Selector(items, random.Random(0))
    first = selector.next()
    assert first.level == 2  # an interview starts in the middle
    selector.answered(True)
    second = selector.next()
    assert second.level == 3 and second.module != first.module  # harder, and from another module
    selector.answered(False)
    selector.answered(False)
    third = selector.next()
    assert third.level == 1 and third.module != second.module
    asked = {first.key, second.key, third.key}
    while (more := selector.next()) is not None:
        assert more.key not in asked  # never the same question twice
        asked.add(more.key)
    assert len(asked) == len(items)


def test_the_mix_passes_over_a_kind_the_scope_lacks(mini_course):
    pool_ = candidates(mini_course.modules())
    kinds = {c.kind for c in pool_}
    assert kinds == {QuestionKind.PREDICT, QuestionKind.REPAIR, QuestionKind.CHOICE, QuestionKind.EXPLAIN}
    assert all(c.drill is None or not c.drill.is_exercise for c in pool_)  # a lab is too long to ask
    selector = Selector(pool_, random.Random(1))
    asked = [selector.next().kind for _ in range(4)]
    expected = [k for k in MIX if k in kinds]
    assert asked == expected[:4]  # no triage drill here: the mix goes on to the next kind


def test_scopes_are_the_done_modules_and_each_part(mini_course):
    offered = scopes(mini_course, done={"01"})
    assert [(s.key, s.modules) for s in offered] == [("done", ("01",)), ("basics", ("01", "02")), ("more", ("04",))]
    with pytest.raises(ValueError, match="done, basics, more"):
        find_scope(mini_course, set(), "tensors")


async def test_an_interview_judges_records_schedules_and_debriefs(session):
    clock = Clock()
    fake = FakeSandbox([])
    service = TutoringService(session, fake)
    interview = Interview(service, find_scope(session.course, set(), "basics"), 45, clock=clock, seed=3)
    interview.selector.pool = [c for c in interview.selector.pool if c.item != "view-error"]
    seen = []
    while (question := interview.next_question()) is not None:
        clock.now += 310  # over every kind's soft limit (a repair's is 300 s): the answer still counts
        seen.append(question.kind)
        if question.kind is QuestionKind.PREDICT:
            drill = question.drill
            key = drill.asks[0].key
            if drill.id == "transpose-strides":  # the misconception: a transpose copies
                fake.results.append(observed({key: strides(1, 3)}))
                answered = await interview.answer_prediction({key: "(3, 1)"}, confidence=3)
                assert answered.correct is False and answered.misconceptions == ("a transpose copies the data",)
            else:
                with pytest.raises(AnswerError):
                    await interview.answer_prediction({key: "int64"})  # the second ask unanswered: nothing ran
                texts = {drill.asks[0].key: "int64", drill.asks[1].key: "6"}
                fake.results.append(observed({drill.asks[0].key: {"type": "dtype", "value": "torch.int64"},
                                              drill.asks[1].key: {"type": "int", "value": 6}}))
                answered = await interview.answer_prediction(texts, confidence=2)
                assert answered.correct is True
        elif question.kind is QuestionKind.REPAIR:
            fake.results.append(observed({question.drill.asks[0].key: {"type": "shape", "value": []}},
                                         check="passed"))
            answered = await interview.answer_repair(question.drill.solution)
            assert answered.correct is True and fake.requests[-1].judged  # the check ran in the judge's process
        elif question.kind is QuestionKind.CHOICE:
            answered = interview.answer_choice("a", confidence=3)  # x.t() copies? no
            assert answered.correct is False and answered.right_answer == "b) x.clone()"
        else:
            with pytest.raises(AnswerError):
                interview.answer_explain("   ")  # Enter is no answer
            shown = interview.answer_explain("it swaps the strides")
            assert shown.needs_rating and shown.model_answer and shown.correct is None
            answered = interview.rate(4)
            assert answered.correct is True
        assert answered.over_limit
    assert not fake.results  # every prepared run was used: no unreadable answer ran
    assert sorted(seen) == sorted([QuestionKind.PREDICT] * 2 + [QuestionKind.REPAIR, QuestionKind.CHOICE,
                                                                 QuestionKind.EXPLAIN])
    attempts = session.store.attempts()
    assert {a.kind for a in attempts} == {AttemptKind.INTERVIEW}
    assert not any(session.drill_done(a.module, a.item) for a in attempts)  # an interview verifies no drill
    assert session.state("01").status.value == "open"  # nor starts a module
    assert session.review.card("01", "transpose-strides") is not None  # a miss is scheduled for review
    assert session.review.card("01", "which-copies") is not None
    assert session.review.card("01", "why-strides") is None  # a right answer on no due card rates nothing
    assert all(judged(a) == (a.item in {"transpose-strides", "sum-dtype", "keepdim-bug"})
               for a in attempts)
    mechanisms = estimate(session.course, attempts)
    assert mechanisms == estimate(session.course, [])  # the mini course tags nothing: no mechanism moves

    report = debrief(session.course, attempts)
    assert (report.right, report.asked) == (3, 5) and report.minutes == 45 and report.scope == "basics"
    assert dict((a, (r, n)) for a, r, n in report.areas) == {"Basics": (3, 5)}
    assert {(m, i) for m, i, _ in report.redo} == {("01", "transpose-strides"), ("01", "which-copies")}
    assert ("(not tagged)", ("a transpose copies the data",), ("01/transpose-strides",)) in report.missed
    assert dict((w, (n, r)) for w, n, r in report.calibration) == {"certain": (2, 0), "fairly sure": (1, 1)}
    text = markdown(report)
    assert "score 3/5 (60%)" in text and "first interview" in text and "(over)" in text
    assert "'certain' was wrong 2 times" in text


async def test_time_up_ends_the_interview_after_the_question_being_answered(session):
    clock = Clock()
    service = TutoringService(session, FakeSandbox([]))
    interview = Interview(service, find_scope(session.course, set(), "basics"), 15, clock=clock, seed=0)
    question = interview.next_question()
    assert "15:00 left of 15 min" in interview.time_line()
    clock.now += 15 * 60 + 5
    assert "0:00 left" in interview.time_line() and "over: it still counts" in interview.time_line()
    if question.kind is QuestionKind.CHOICE:
        interview.answer_choice("b")
    elif question.kind is QuestionKind.EXPLAIN:
        interview.answer_explain("x")
        interview.rate(1)
    else:
        interview.selector.answered(True)
        interview.current = None
    assert interview.next_question() is None


async def test_a_second_interview_is_compared_with_the_first(session):
    service = TutoringService(session, FakeSandbox([]))
    for rating in (1, 4):
        clock = Clock()
        interview = Interview(service, find_scope(session.course, set(), "basics"), 15, clock=clock, seed=0)
        interview.selector.pool = [c for c in interview.selector.pool if c.kind is QuestionKind.EXPLAIN]
        interview.next_question()
        interview.answer_explain("an answer")
        interview.rate(rating)
    attempts = session.store.attempts()
    assert len(interviews(attempts)) == 2
    report = debrief(session.course, attempts)
    assert report.score == 1.0 and [p.score for p in report.previous] == [0.0]
    assert "now 100% (+100 points)" in markdown(report)
    first = debrief(session.course, attempts, list(interviews(attempts))[0])
    assert first.previous == () and first.redo == (("01", "why-strides", "Why can a transpose be free?"),)


def test_the_debrief_command_prints_or_writes_the_last_interview(tmp_path, mini_course, mini_course_dir,
                                                                 monkeypatch, capsys):
    from tutor.cli import main
    from tutor.locations import profile_path

    monkeypatch.setenv("PYTORCH_TUTOR_HOME", str(tmp_path / "home"))
    lessons = ["--lessons", str(mini_course_dir)]
    assert main(lessons + ["interview", "--debrief"]) == 1
    assert "No interview yet" in capsys.readouterr().out
    assert main(lessons + ["interview", "--markdown", str(tmp_path / "d.md")]) == 2
    assert "use it with --debrief" in capsys.readouterr().err
    store = ProfileStore.open(profile_path("default"), course="mini-course")
    session = Session(mini_course, store)
    interview = Interview(TutoringService(session, FakeSandbox([])), find_scope(mini_course, set(), "basics"), 30,
                          clock=Clock())
    interview.selector.pool = [c for c in interview.selector.pool if c.kind is QuestionKind.EXPLAIN]
    interview.next_question()
    interview.answer_explain("strides swap")
    interview.rate(2)  # "partly": not right
    store.close()
    assert main(lessons + ["interview", "--debrief"]) == 0
    out = capsys.readouterr().out
    assert "30 minutes · the part 'Basics' · 1 question · score 0/1 (0%)" in out
    assert "- 01/why-strides: Why can a transpose be free?" in out
    assert main(lessons + ["interview", "--debrief", "--markdown", str(tmp_path / "d.md")]) == 0
    assert (tmp_path / "d.md").read_text() == out


async def test_stats_tell_interview_answers_from_practice(session):
    from tutor.progress.stats import compute

    assert "none yet" in compute(session.course, []).interview_line()
    clock = Clock()
    interview = Interview(TutoringService(session, FakeSandbox([])), find_scope(session.course, set(), "basics"),
                          15, clock=clock)
    interview.selector.pool = [c for c in interview.selector.pool if c.check is not None]
    while (question := interview.next_question()) is not None:
        if question.kind is QuestionKind.CHOICE:
            interview.answer_choice("b")
        else:
            interview.answer_explain("x")
            interview.rate(1)
    stats = compute(session.course, session.store.attempts())
    assert (stats.interview_answers, stats.interview_right) == (2, 1)
    assert stats.interview_line() == "Interviews: 1 of 2 answers right (50%)."
    assert stats.modules["01"].drills == 0  # no prediction: an interview answer is not practice
