"""validate catches without running code what only check caught: unreadable wrong answers; YAML errors carry a hint."""

from __future__ import annotations

import io
import shutil

from tests.conftest import MINI_COURSE
from tutor.authoring import validate

DRILL = """format_version: 1
module: "04"
drills:
  - id: one
    prompt: Predict.
    setup: import torch
    code: y = torch.zeros(2)
    ask: [{kind: shape, expr: y.shape}]
    explanation: zeros.
    hints: [count]
    wrong_answers: [{answer: "banana", misconception: fruit}]
"""


def course_with(tmp_path, module_text):
    root = tmp_path / "course"
    shutil.copytree(MINI_COURSE, root)
    (root / "04_after.yaml").write_text(module_text)
    return root


def test_a_wrong_answer_the_judge_cannot_read_is_an_error(tmp_path):
    out = io.StringIO()
    assert validate([course_with(tmp_path, DRILL)], out) == 1
    assert "wrong answer 'banana' for 'y.shape' cannot be read as shape" in out.getvalue()


def test_a_bad_indent_gets_a_hint(tmp_path):
    out = io.StringIO()
    bad = DRILL.replace("    code: y", "   code: y")
    assert validate([course_with(tmp_path, bad)], out) == 1
    assert "invalid YAML" in out.getvalue() and "hint: a line is indented differently" in out.getvalue()


def test_a_colon_in_a_value_gets_a_hint(tmp_path):
    out = io.StringIO()
    bad = DRILL.replace("    explanation: zeros.", "    explanation: zeros: two of them")
    assert validate([course_with(tmp_path, bad)], out) == 1
    assert "hint: a value contains ': '" in out.getvalue()
