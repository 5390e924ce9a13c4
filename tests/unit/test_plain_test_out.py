"""Plain mode has test-out (issue 29, section 2): a screen-reader user reaches a locked module without finishing the
ones before it, on the same placement as the app's, and Enter answers no question."""

from __future__ import annotations

import io

from tutor.plain.plain_tutor import run_plain
from tutor.progress.store import ProfileStore
from tutor.session import Session

# the right answer to every ask of the mini course's 01 a placement may ask
RIGHT = {"transpose-strides": ["(1, 3)"], "sum-dtype": ["int64", "6"], "which-copies": ["b"]}


def test_plain_mode_tests_out_of_a_locked_module_and_enter_answers_nothing(tmp_path, mini_course, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    session = Session(mini_course, store)
    questions = session.placement_set("02")  # the draw is seeded: the same set the tutor will ask
    lines = ["02", "test 02"]
    for question in questions:
        lines.append("")  # Enter first: never an answer
        lines += RIGHT[question.item]
    lines.append(":quit")
    out = io.StringIO()
    assert run_plain(session, "default", io.StringIO("\n".join(lines) + "\n"), out, scripted_sandbox) == 0
    text = out.getvalue()
    assert "Module 02 is locked: needs 01" in text and "Type 'test 02' to test out of them." in text
    assert text.count("[test-out]") == sum(len(RIGHT[q.item]) for q in questions) + len(questions)
    assert "No answer yet" in text or "Type a letter" in text  # the Enter was refused, the question asked again
    assert f"{len(questions)}/{len(questions)} right. Tested out: 01. Module 02 is open." in text
    assert "Unlocked: 02 Second steps" in text
    assert "== 02 " in text  # and the learner is in module 02
    assert session.state("01").status.value == "tested out"
    store.close()
