"""Plain mode, driven through stdin as a script or a screen-reader user would."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from tutor.plain.plain_tutor import run_plain
from tutor.progress.store import ProfileStore
from tutor.session import Session
from tutor.workspace import Workspace, ensure_starter

ANSWERS = "\n".join([
    "01",            # open module 01
    "three by one",  # unreadable: the expected form is shown, nothing runs
    "(3, 1)", "",    # wrong, no confidence
    ":hint",
    "1x3", "3",      # right, certain
    "int64", "6", "",
    "strides are swapped", "3",  # free-text self-check, then the self-rating
    "b",             # multiple choice, right
    ":quit",
]) + "\n"


def test_plain_mode_runs_a_module_from_stdin(tmp_path, mini_course, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    out = io.StringIO()
    assert run_plain(Session(mini_course, store), "default", io.StringIO(ANSWERS), out, scripted_sandbox) == 0
    text = out.getvalue()
    assert "I can't read 'three by one' as stride" in text
    assert "First divergence: stride, dim 0: you said 3, observed 1" in text
    assert "Your answer “(3, 1)” reveals a common misconception: a transpose copies the data" in text
    assert "Hint 1/2:" in text
    assert "Verified ✓ right." in text
    assert "Unlocked: 02 Second steps" in text
    assert "Goodbye — your progress is saved." in text
    assert "\x1b" not in text  # no colour, no cursor movement
    session = Session(mini_course, store)
    assert session.state("01").status.value == "done"
    assert [a.confidence for a in store.attempts() if a.kind == "prediction"] == [None, 3, None]


def test_plain_mode_end_of_input_saves_and_leaves(tmp_path, mini_course, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    out = io.StringIO()
    assert run_plain(Session(mini_course, store), "default", io.StringIO("01\n1x3\n\n"), out, scripted_sandbox) == 0
    assert "Goodbye" in out.getvalue()
    assert len(store.attempts()) == 1


@pytest.mark.slow  # end to end: the real command, its own sandbox
def test_plain_mode_from_the_command_line_respects_no_color(tmp_path, mini_course_dir):
    env = {**os.environ, "NO_COLOR": "1", "PYTORCH_TUTOR_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "tutor", "--lessons", str(mini_course_dir), "--trust-lessons",
                           "--plain"], input="02\n01\n1x3\n\n:quit\n", capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Module 02 is locked: needs 01" in done.stdout
    assert "Verified ✓ right." in done.stdout
    assert "\x1b" not in done.stdout


def test_plain_mode_says_when_the_lab_file_cannot_be_read_and_runs_nothing(tmp_path, mini_course, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    session = Session(mini_course, store)
    drill = mini_course.slot("04").module.drill("write-relu")
    path = ensure_starter(Workspace("default", mini_course.identity), "04", drill)
    path.write_bytes(b"def relu(x):\n    return x  # caf\xe9\n")  # saved in Latin-1 by another editor
    out = io.StringIO()
    run_plain(session, "default", io.StringIO("\n:quit\n"), out, scripted_sandbox,
              start=("04", "write-relu"))  # as --drill gives it (the lock is not what this test is about)
    text = out.getvalue()
    assert f"{path} is not UTF-8 text" in text
    assert "The lab's file could not be read, so nothing was run and nothing was recorded." in text
    assert "Running in the sandbox" not in text  # nothing ran, so it is not said to
    assert store.attempts() == [] and path.read_bytes().endswith(b"caf\xe9\n")
