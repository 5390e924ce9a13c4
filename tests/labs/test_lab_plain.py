"""Plain mode with the puzzle pack: a module id "1" opens as typed; a lab can be reset (issue 20)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tutor.course.loader import load_course
from tutor.plain.plain_tutor import run_plain
from tutor.progress.store import ProfileStore
from tutor.session import Session
from tutor.workspace import Workspace, exercise_path

SPACE = Workspace("default", "tensor-puzzles")  # the course's lab files in the default profile

pytestmark = pytest.mark.slow

PACK = Path(__file__).resolve().parent.parent / "fixtures" / "puzzle_labs"


def test_module_1_opens_and_a_lab_runs_resets_and_lists_its_tests(tmp_path):
    course = load_course(PACK)
    session = Session(course, ProfileStore.open(tmp_path / "p.sqlite"))
    ones = course.slot("1").module.drill("ones")
    path = exercise_path(SPACE, "1", ones)
    script = io.StringIO("1\n\n:reset\n:quit\n")
    out = io.StringIO()

    assert run_plain(session, "default", script, out) == 0
    text = out.getvalue()
    assert "There is no module '1'" not in text  # it used to be padded to 01
    assert "== 1 lab 1/" in text and str(path) in text
    assert "✗ examples" in text and "tests pass" in text  # the starter fails, test by test
    assert "The starter is back. Your version is kept at" in text
    assert "return None" in path.read_text()
