"""Answers typed and not yet verified survive the end of input and a relaunch, in plain mode and the app alike.

A script types the first answer of a two-answer drill and its input ends (the terminal is lost); the
relaunched tutor offers that answer again, and an empty line keeps it.
"""

from __future__ import annotations

import io

from tutor.plain.plain_tutor import run_plain
from tutor.progress.store import ProfileStore
from tutor.session import Session


def plain(tmp_path, course, sandbox, script: str, start=("01", "sum-dtype")) -> str:
    """One launch of plain mode on ``script`` as its stdin (``--drill`` ``start``): what it printed."""
    store = ProfileStore.open(tmp_path / "p.sqlite")  # each call a relaunch: the profile from disk
    try:
        out = io.StringIO()
        assert run_plain(Session(course, store), "default", io.StringIO(script), out, sandbox, start=start) == 0
        return out.getvalue()
    finally:
        store.close()


def test_an_answer_typed_before_the_input_ended_is_offered_after_a_relaunch(tmp_path, mini_course,
                                                                            make_scripted_sandbox):
    plain(tmp_path, mini_course, make_scripted_sandbox(), "float32\n")  # the input ends at the second answer
    text = plain(tmp_path, mini_course, make_scripted_sandbox(), "\n6\n\n")
    assert "Your answer from before: float32 (Enter keeps it)" in text
    assert "you said torch.float32" in text  # the empty line kept it: it was run and judged
    assert "Not yet" in text

    # wrong: both answers stay offered; the learner changes the wrong one only
    text = plain(tmp_path, mini_course, make_scripted_sandbox(), "int64\n\n\n")
    assert "Your answer from before: 6 (Enter keeps it)" in text
    assert "Verified ✓ right." in text

    # verified: nothing is offered any more (the drill shows it is done)
    store = ProfileStore.open(tmp_path / "p.sqlite")
    try:
        assert store.drafts("01", "sum-dtype") == {}
    finally:
        store.close()


def test_drafts_belong_to_their_drill_and_a_typed_answer_replaces_one(tmp_path, mini_course, make_scripted_sandbox):
    plain(tmp_path, mini_course, make_scripted_sandbox(), "(1, 3)\n", start=("01", "transpose-strides"))
    text = plain(tmp_path, mini_course, make_scripted_sandbox(), ":quit\n")  # sum-dtype: nothing typed there
    assert "Your answer from before" not in text
    text = plain(tmp_path, mini_course, make_scripted_sandbox(), "(3, 1)\n\n:quit\n", start=("01", "transpose-strides"))
    assert "Your answer from before: (1, 3)" in text and "you said (3, 1)" in text
