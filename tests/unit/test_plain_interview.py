"""Interview mode in plain mode, driven by a learner who answers whatever is asked (tests/interview_learner.py)."""

from __future__ import annotations

import io

import pytest

from tests.interview_learner import ANSWERS, PlainLearner
from tutor.interview.debrief import debrief, interviews
from tutor.plain.plain_tutor import run_plain
from tutor.progress.store import AttemptKind, ProfileStore
from tutor.session import Session


@pytest.fixture(params=["scripted", "real"])
def sandbox(request):
    """The scripted sandbox, and once (slow) the real one: the same interview, run for real."""
    if request.param == "real":
        request.applymarker(pytest.mark.slow)
        return request.getfixturevalue("real_sandbox")
    return request.getfixturevalue("scripted_sandbox")


def test_a_plain_interview_from_the_module_prompt_to_its_debrief(tmp_path, mini_course, sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    session = Session(mini_course, store)
    out = io.StringIO()
    # 'interview' at the module prompt; a wrong length, then 30; 'done' (nothing done yet: refused), then 'basics'
    learner = PlainLearner(out, ["interview", "20", "30", "done", "basics"])
    assert run_plain(session, "default", learner, out, sandbox) == 0
    text = out.getvalue()
    assert "Type 15, 30 or 45." in text and "There is no scope 'done'" not in text
    assert "Type one of: basics, more." in text or "choose a part of the course" in text
    assert "== Interview: 30 minutes on the part 'Basics'" in text
    assert "That was every question this scope has." in text  # 30 minutes outlast the part's six questions
    assert "Wrong" in text and "Right answer: (1, 3)" in text and "off by one" not in text
    assert "Model answer: Because it only swaps strides." in text
    assert "# Interview debrief" in text and "score 5/6 (83%)" in text
    assert "your answer showed a misconception: a transpose copies the data" in text
    assert "'certain' was wrong 1 time" in text
    assert "[module]" in text.rsplit("# Interview debrief", 1)[1]  # back at the module list after the debrief
    assert len(learner.asked) == 6 and set(learner.asked) == set(ANSWERS) - {"1 + 1 as a tensor"} | {"repair"}
    attempts = store.attempts()
    assert {a.kind for a in attempts} == {AttemptKind.INTERVIEW} and len(interviews(attempts)) == 1
    assert debrief(mini_course, attempts).right == 5
    store.close()


def test_plain_interview_command_takes_length_and_scope_and_leaves_after_the_debrief(tmp_path, mini_course,
                                                                                     scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    session = Session(mini_course, store)
    out = io.StringIO()
    learner = PlainLearner(out, [])
    assert run_plain(session, "default", learner, out, scripted_sandbox, interview=(15, "more")) == 0
    text = out.getvalue()
    assert "[interview]" not in text and "[module]" not in text  # both given: nothing asked; no module list
    assert "== Question 1 — predict the behaviour (module 04)" in text and "== Question 2" not in text
    assert "score 1/1 (100%)" in text and "Goodbye" in text
    store.close()
