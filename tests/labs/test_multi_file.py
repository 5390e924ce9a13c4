"""A multi-file lab: the learner's other files are importable by name; the judge imports their references."""

from __future__ import annotations

import asyncio
import io

import pytest

from tutor.commands.authoring import check
from tutor.course.loader import load_course
from tutor.grading import grade, request_for
from tutor.judge import labs
from tutor.plain.plain_tutor import run_plain
from tutor.progress.store import ProfileStore
from tutor.session import Session
from tutor.tutoring.service import TutoringService
from tutor.tutoring.states import Outcome
from tutor.workspace import Workspace, ensure_starter, exercise_path, lab_files, other_file_path, reset_exercise

SPACE = Workspace("default", "two")  # the course's lab files in the default profile

pytestmark = pytest.mark.slow

MODULE = '''format_version: 2
module: "1"
drills:
  - id: two-files
    kind: lab
    prompt: "Write `linear` in layers.py and `mlp` in your main file, which imports it."
    setup: import torch
    starter: |
      from layers import linear

      def mlp(x, w1, w2):
          return None
    solution: |
      from layers import linear

      def mlp(x, w1, w2):
          return linear(linear(x, w1).relu(), w2)
    files:
      - name: layers
        starter: |
          def linear(x, w):
              return None
        solution: |
          def linear(x, w):
              return x @ w.T
    tests:
      - name: shapes
        probe: |
          x, w1, w2 = torch.ones(2, 3), torch.ones(4, 3), torch.ones(5, 4)
          out = mlp(x, w1, w2)
        check: |
          assert out.shape == (2, 5), f"mlp gave shape {tuple(out.shape)}, expected (2, 5)"
          assert bool((out == 12).all()), f"mlp gave {out.tolist()}"
    wrong_submissions:
      - code: |
          from layers import linear

          def mlp(x, w1, w2):
              return linear(linear(x, w1).relu(), w2)
        files: {layers: "def linear(x, w):\\n    return x @ w\\n"}
        test: shapes
        misconception: "a Linear weight is (out, in): x @ w needs w.T"
    explanation: x @ w.T maps in to out features.
    hints: [Look at the weight's shape.]
'''


def _two_file_course(tmp_path):
    root = tmp_path / "course"
    root.mkdir()
    (root / "course.yaml").write_text('format_version: 2\nid: two\ntitle: T\nparts: [{id: p, title: P}]\n'
                                      'modules:\n  - {id: "1", part: p, requires: [], title: M, file: m.yaml}\n')
    (root / "m.yaml").write_text(MODULE)
    course = load_course(root)
    assert not course.all_errors(), course.all_errors()
    return root, course


def _right_main_file(lab) -> None:
    """The learner's main file is the reference, so only their layers.py decides the verdict."""
    ensure_starter(SPACE, "1", lab)
    exercise_path(SPACE, "1", lab).write_text(lab.solution)


def test_the_learners_other_file_is_used_and_reset_with_the_lab(tmp_path, tutor_home, sandbox):
    root, course = _two_file_course(tmp_path)
    lab = course.slot("1").module.drill("two-files")
    ensure_starter(SPACE, "1", lab)
    layers = other_file_path(SPACE, "1", lab, "layers")
    assert layers.read_text().startswith("def linear(x, w):\n    return None")

    def run(files):
        return grade(lab, {}, asyncio.run(sandbox.run(request_for(lab, lab.solution, files))))

    # the learner's main file is right, but their layers.py is still the starter
    assert not labs.all_passed(run(lab_files(SPACE, "1", lab)[0]).tests)
    layers.write_text("def linear(x, w):\n    return x @ w.T\n")
    assert labs.all_passed(run(lab_files(SPACE, "1", lab)[0]).tests)
    # the wrong layers.py of the listed wrong submission is rejected by its test
    layers.write_text("def linear(x, w):\n    return x @ w\n")
    assert not run(lab_files(SPACE, "1", lab)[0]).tests[0].passed
    reset_exercise(SPACE, "1", lab)
    assert "return None" in layers.read_text()
    assert list(layers.parent.glob("layers.before-reset-*.py"))
    out = io.StringIO()
    assert check([root], out) == 0, out.getvalue()  # starter fails, references pass, the wrong layers.py rejected


def test_the_service_grades_the_learners_second_file_and_without_it_its_starter(tmp_path, tutor_home, sandbox):
    _root, course = _two_file_course(tmp_path)
    lab = course.slot("1").module.drill("two-files")
    _right_main_file(lab)
    other_file_path(SPACE, "1", lab, "layers").write_text("def linear(x, w):\n    return x @ w.T\n")
    service = TutoringService(Session(course, ProfileStore.open(tmp_path / "p.sqlite")), sandbox)
    main = exercise_path(SPACE, "1", lab).read_text()

    def check(files):
        return asyncio.run(service.check_lab("1", lab, main, 1.0, files)).outcome

    assert check(lab_files(SPACE, "1", lab)[0]) == Outcome.SOLVED
    # a caller that leaves the other files out is graded on layers.py's starter, whatever is on disk
    assert check(None) == Outcome.CHECK_FAILS


class _EditsBetweenRuns:
    """Plain mode's stdin: the learner fixes layers.py in their editor before pressing Enter again."""

    def __init__(self, layers, lines):
        self.layers, self.lines, self.read = layers, list(lines), 0

    def readline(self) -> str:
        self.read += 1
        if self.read == 3:  # after the first run (module id, Enter): the edit, then Enter
            self.layers.write_text("def linear(x, w):\n    return x @ w.T\n")
        return self.lines.pop(0) if self.lines else ""


def test_plain_mode_grades_the_learners_edit_to_the_second_file(tmp_path, tutor_home, sandbox):
    _root, course = _two_file_course(tmp_path)
    lab = course.slot("1").module.drill("two-files")
    _right_main_file(lab)
    layers = other_file_path(SPACE, "1", lab, "layers")
    out = io.StringIO()
    session = Session(course, ProfileStore.open(tmp_path / "p.sqlite"))

    assert run_plain(session, "default", _EditsBetweenRuns(layers, ["1\n", "\n", "\n", ":quit\n"]), out,
                     sandbox=sandbox) == 0
    runs = out.getvalue().split("Running in the sandbox…")[1:]
    assert len(runs) == 2, out.getvalue()
    assert "✗ shapes" in runs[0] and "The reference solution:" not in runs[0]  # the starter layers.py fails
    assert "All checks pass" in runs[1] and "The reference solution:" in runs[1]  # the learner's edit passes
