"""validate catches without running code what only check caught: unreadable wrong answers; YAML errors carry a hint."""

from __future__ import annotations

import io
import shutil

from tests.conftest import MINI_COURSE
from tutor.commands.authoring import validate

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


LAB = """format_version: 2
module: "04"
drills:
  - id: write-relu
    kind: lab
    prompt: Complete relu(x).
    setup: import torch
    starter: |
      def relu(x):
          raise NotImplementedError
    probe: out = relu(torch.tensor([-1.0, 2.0])).tolist()
    check: assert out == [0.0, 2.0], "negative entries must become 0"
    solution: |
      def relu(x):
          return x.clamp(min=0)
    explanation: clamp.
    hints: [clamp]
    wrong_submissions:
      - change: [{from: "x.clamp(min=0)", to: "x.abs()"}]
        test: check
        misconception: ReLU drops the sign
"""
SECOND = """      - change: [{from: "x.clamp(min=0)", to: "x.clamp(max=0)"}]
        test: check
        misconception: the wrong side of zero
"""


def test_a_lab_with_fewer_than_two_wrong_submissions_is_warned_not_refused(tmp_path):
    out = io.StringIO()
    assert validate([course_with(tmp_path, LAB)], out) == 0, out.getvalue()  # old packs keep validating
    assert ("04_after.yaml:4: warning: drill 'write-relu': a lab with 1 wrong submission: declare at least 2"
            in out.getvalue()), out.getvalue()
    # the mini course's format-1 repair is counted too (issue 30: repairs prove their wrong fixes)
    assert "validate: ok, 1 lab, 1 repair with fewer than 2 wrong submissions" in out.getvalue()

    out = io.StringIO()
    assert validate([course_with(tmp_path / "two", LAB + SECOND)], out) == 0
    assert "write-relu" not in out.getvalue() and "validate: ok, 1 repair with fewer than 2" in out.getvalue()


def test_a_labs_own_rules_that_drop_the_modules_are_warned(tmp_path):
    module = tmp_path / "m.yaml"
    module.write_text(MODULE_RULES)
    out = io.StringIO()
    assert validate([module], out) == 0, out.getvalue()
    assert ("m.yaml:7: warning: drill 'lab': its own `rules:` replace the module's whole, so no_comprehensions no "
            "longer apply to it" in out.getvalue()), out.getvalue()
    module.write_text(MODULE_RULES.replace("{forbid_attributes: [argmin], no_loops: true}",
                                           "{forbid_attributes: [argmin], no_loops: true, no_comprehensions: true}"))
    out = io.StringIO()
    assert validate([module], out) == 0 and "replace the module's" not in out.getvalue(), out.getvalue()


MODULE_RULES = """format_version: 2
module: "01"
intro: A module whose labs share rules.
setup: import torch
rules: {no_loops: true, no_comprehensions: true}
drills:
  - id: lab
    kind: lab
    title: A lab
    prompt: Write f.
    starter: |
      def f(d):
          return d.argmin(1)
    tests:
      - name: t
        probe: out = f(torch.tensor([[3., 1.], [0., 2.]])).tolist()
        check: assert out == [1, 0], out
    rules: {forbid_attributes: [argmin], no_loops: true}
    solution: |
      def f(d):
          return (-d).max(1).indices
    explanation: The index of the smallest is the index of the largest negation.
    hints: [Negate.]
"""
