"""Placement draws a real test from every skipped module, decides module by module, never opens a module behind an
unmet prerequisite (issue 29, section 2) and never repeats itself on a retry (issue 12, item 2)."""

from __future__ import annotations

from pathlib import Path

from tutor.course.loader import load_course
from tutor.placement import PER_MODULE, PLACEMENT_MIN, PlacementResult, candidates, draw, judge_choice

LESSONS = Path(__file__).resolve().parents[2] / "lessons"


def _modules(*ids):
    course = load_course(LESSONS)
    return [course.slot(i).module for i in ids]


def test_a_placement_is_at_least_five_questions_from_drills_and_self_checks():
    modules = _modules("02", "01")
    questions = draw(modules, set(), "03:1")
    assert len(questions) == PLACEMENT_MIN
    assert {q.module for q in questions} == {"01", "02"}  # every skipped module is tested
    assert any(q.runs_code for q in questions) and any(not q.runs_code for q in questions)
    assert len({q.key for q in questions}) == len(questions)


def test_a_retry_never_repeats_a_question_while_fresh_ones_remain():
    modules = _modules("02", "01")
    first = draw(modules, set(), "03:1")
    second = draw(modules, {q.key for q in first}, "03:2")
    assert not {q.key for q in first} & {q.key for q in second}
    pool = sum(len(v) for v in candidates(modules).values())
    asked = {q.key for q in first} | {q.key for q in second}
    third = draw(modules, asked, "03:3")
    fresh = pool - len(asked)
    assert len([q for q in third if q.key not in asked]) == min(fresh, len(third))


def test_a_wrong_choice_says_what_was_right_and_why():
    module = _modules("01")[0]
    check = next(c for c in module.self_checks if c.is_choice)
    question = next(q for q in candidates([module])["01"] if q.check is check)
    wrong = next(i for i in range(len(check.options)) if i != check.correct)
    result = judge_choice(question, "x", wrong)
    assert not result.correct
    assert result.right_answer.startswith(f"{chr(ord('a') + check.correct)})")
    assert "you chose" in result.why and check.answer.strip()[:30] in result.why


def test_tested_out_modules_are_their_own_state_never_done(capsys):
    from tutor.cli import main
    from tutor.locations import profile_path
    from tutor.progress.store import Attempt, ProfileStore
    from tutor.session import Session

    course = load_course(LESSONS)
    store = ProfileStore.open(profile_path("placed"))
    session = Session(course, store)
    for module in ("01", "02"):
        store.record(Attempt(module, "placement", "placement", True, verdict={"for": "03"}))
    session._changed()
    assert session.state("02").status.value == "tested out"
    assert session.state("03").status.value == "open"  # what it opens
    assert session.progress.done == set()
    store.close()
    assert main(["--profile", "placed", "progress"]) == 0
    out = capsys.readouterr().out
    assert "0 of 38 written modules done, 2 tested out" in out
    assert sum("tested out" in line for line in out.splitlines() if line[:2] in ("01", "02")) == 2


def _session(name="placed"):
    from tutor.locations import profile_path
    from tutor.progress.store import ProfileStore
    from tutor.session import Session

    store = ProfileStore.open(profile_path(name))
    return Session(load_course(LESSONS), store), store


def _open_behind_unmet(session) -> list[str]:
    """Modules the learner may open while a prerequisite is neither done nor tested out (must be none)."""
    from tutor.course.graph import effective_requires

    met = session.progress.done | session.progress.tested_out
    return [s.id for s in session.course.slots if session.can_open(s.id)
            and any(r not in met for r in effective_requires(session.course, s.id))]


def test_a_drill_question_asks_every_ask_of_its_drill():
    module = _modules("01")[0]
    for question in candidates([module])["01"]:
        if question.runs_code:
            assert question.asks == tuple(question.drill.asks)


def test_testing_out_of_23_asks_every_module_it_would_mark_its_own_questions():
    session, store = _session()
    try:
        questions = session.placement_set("23")
        asked = {q.module for q in questions}
        assert asked == {f"{n:02d}" for n in range(1, 23)}  # 01-22, not the nearest eight
        for module_id in asked:
            own = [q for q in questions if q.module == module_id]
            assert len(own) == min(PER_MODULE, len(candidates([session.module(module_id)])[module_id]))
    finally:
        store.close()


async def _place(session, module_id, wrong_in=()):
    """Take a placement through the tutoring service, every answer right except in ``wrong_in``."""
    from tutor.tutoring.service import TutoringService

    service = TutoringService(session, sandbox=None)
    results = [PlacementResult(q, "x", q.module not in wrong_in, "x") for q in session.placement_set(module_id)]
    return await service.take_placement(module_id, results)


async def test_a_failed_module_in_the_chain_opens_nothing_behind_it():
    """Issue 29: testing out of 23 marked 15-22 while 04-14 stayed locked, and opened 26 and 30."""
    session, store = _session()
    try:
        report = await _place(session, "23", wrong_in={"10"})
        assert report.failed == ("10",)
        assert report.tested_out == tuple(f"{n:02d}" for n in range(1, 10))  # 01-09: their own and prereqs met
        assert report.held_back == tuple(f"{n:02d}" for n in range(11, 23))  # passed, but behind 10
        assert not report.passed
        for locked in ("11", "15", "22", "23", "26", "30"):
            assert session.state(locked).status.value == "locked", locked
        assert session.state("10").status.value == "open"
        assert _open_behind_unmet(session) == []
        retry = await _place(session, "23")  # a retry marks the rest, and only now opens 23 (and what 19 opens)
        assert retry.passed and retry.tested_out == tuple(f"{n:02d}" for n in range(10, 23))
        assert {m.id for m in retry.unlocked} >= {"23", "26", "30"}
        assert _open_behind_unmet(session) == []
    finally:
        store.close()


def test_a_profile_marked_by_the_old_placement_opens_nothing_behind_an_unmet_prerequisite():
    from tutor.progress.store import Attempt

    session, store = _session()
    try:
        for n in range(15, 23):  # what the old placement recorded for 23: the nearest eight only
            store.record(Attempt(f"{n:02d}", "placement", "placement", True, verdict={"for": "23"}))
        session._changed()
        assert session.progress.tested_out == set()
        for module_id in ("15", "22", "23", "26", "30"):
            assert session.state(module_id).status.value == "locked", module_id
        assert _open_behind_unmet(session) == []
    finally:
        store.close()
