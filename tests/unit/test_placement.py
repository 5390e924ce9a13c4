"""Placement draws a real test from the skipped modules and never repeats itself on a retry (issue 12, item 2)."""

from __future__ import annotations

from pathlib import Path

from tutor.course.loader import load_course
from tutor.placement import PLACEMENT_MAX, PLACEMENT_MIN, candidates, draw, judge_choice

LESSONS = Path(__file__).resolve().parents[2] / "lessons"


def _modules(*ids):
    course = load_course(LESSONS)
    return [course.slot(i).module for i in ids]


def test_a_placement_is_five_to_eight_questions_from_drills_and_self_checks():
    modules = _modules("02", "01")
    questions = draw(modules, set(), "03:1")
    assert PLACEMENT_MIN <= len(questions) <= PLACEMENT_MAX
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
