"""What a learner is told of a lab before writing it: its rules in words, and what its setup gives them."""

from __future__ import annotations

import dataclasses

from tutor.course.schema import SourceRules
from tutor.tutoring.lab_brief import brief_lines, given_names, rule_lines
from tutor.commands.validation import load_targets

LAB = """format_version: 2
module: "01"
intro: A lab with rules and helpers.
setup: |
  import torch
  import torch.nn.functional as F
rules: {no_loops: true, forbid_attributes: [argmin], max_lines: 4}
drills:
  - id: nearest
    kind: lab
    title: Nearest point
    prompt: Write nearest(P, Q).
    setup: |
      from math import sqrt
      CLOUD = torch.zeros(3, 2)
      def reference(P, Q, *, squared=True):
          return torch.cdist(P, Q).argmin(1)
      class Recorder:
          pass
    starter: |
      def nearest(P, Q):
          raise NotImplementedError
    tests:
      - name: t
        probe: got = nearest(CLOUD, CLOUD).tolist()
        check: assert got == reference(CLOUD, CLOUD).tolist(), got
    solution: |
      def nearest(P, Q):
          return (-torch.cdist(P, Q)).max(1).indices
    explanation: The nearest point is the largest negated distance.
    hints: [Negate the distances.]
"""


def test_rules_in_words_and_the_setup_by_signature_never_by_body(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(LAB)
    drill = load_targets([path])[0].modules[0].drills[0]
    # only what the reference solution uses: the tests' `reference` and CLOUD are machinery, not the learner's
    assert given_names(drill) == ["torch"]
    assert given_names(dataclasses.replace(drill, solution="def nearest(P, Q):\n    return reference(P, Q) + sqrt(1)\n")) \
        == ["sqrt", "reference(P, Q, squared)"]
    rules, given = brief_lines(drill)
    assert rules.startswith("Rules for your file") and "no `for` or `while` loops" in rules
    assert "it may not use `.argmin`" in rules and "at most 4 lines of code" in rules
    assert "cdist" not in rules + given  # the reference's body stays unshown


def test_every_rule_has_words_and_no_rules_say_nothing():
    assert rule_lines(None) == []
    every = SourceRules(allow_names=("a",), allow_attributes=("shape",), allow_calls=("len",), forbid_names=("torch",),
                        forbid_modules=("capstone.model",), forbid_attributes=("sum",), no_loops=True,
                        no_comprehensions=True, no_imports=True, max_lines=3, max_columns=80)
    assert len(rule_lines(every)) == len(every.to_wire())


def test_a_repair_that_is_a_declared_wrong_fix_names_its_misconception_whatever_its_layout():
    from tutor.course.loader import load_course
    from tutor.judge.labs import repair_misconception
    from tutor.locations import builtin_course_dir

    drill = next(d for m in load_course(builtin_course_dir()).modules() for d in m.drills
                 if d.is_repair and not d.is_first_divergence and d.wrong_submissions and d.variants is None)
    wrong = drill.wrong_submissions[0]
    relaid = "# my fix\n" + wrong.code.replace("\n", "\n\n")  # comments and blank lines do not matter
    assert repair_misconception(drill, relaid) == wrong.misconception
    assert repair_misconception(drill, drill.solution) == ""
    assert repair_misconception(drill, "this is not python (") == ""
