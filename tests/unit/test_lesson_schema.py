"""The declared lesson schema: explicit drill kinds (format 2), format 1 still read, positions on every error."""

from __future__ import annotations

from pathlib import Path

from tutor.course.loader import load_course, load_module_file
from tutor.course.schema import DrillKind
from tutor.locations import builtin_course_dir

PREDICTION = """\
  - id: p1
    prompt: What is the shape?
    setup: import torch
    code: y = torch.zeros(2, 3)
    ask:
      - {expr: y.shape, kind: shape}
    explanation: zeros takes the sizes.
    hints: [count]
    wrong_answers:
      - {answer: "(3, 2)", misconception: sizes are reversed}
"""

LAB = """\
  - id: lab1
    kind: lab
    prompt: Write double(x).
    starter: |
      def double(x):
          raise NotImplementedError
    solution: |
      def double(x):
          return 2 * x
    tests:
      - name: small
        probe: got = double(2)
        check: assert got == 4, f"double(2) gave {got}"
      - name: negative
        probe: neg = double(-3)
        check: assert neg == -6
        hints: [negative numbers double too]
    rules: {no_loops: true, max_lines: 3, allow_calls: [len]}
    wrong_submissions:
      - code: |
          def double(x):
              return x + 2
        test: negative
        misconception: adding two is doubling only for two
    explanation: twice x.
    hints: [multiply]
"""


def load(tmp_path: Path, drills: str, version: int = 2, extra: str = ""):
    path = tmp_path / "m.yaml"
    path.write_text(f'format_version: {version}\nmodule: "01"\n{extra}drills:\n{drills}')
    return load_module_file(path)


def test_format_2_kinds_are_explicit_and_a_lab_reads_its_tests(tmp_path):
    module, errors = load(tmp_path, PREDICTION + LAB, extra="setup: import math\n")
    assert errors == []
    p, lab = module.drills
    assert p.kind is DrillKind.PREDICTION and lab.kind is DrillKind.LAB and lab.is_exercise
    assert [t.name for t in lab.tests] == ["small", "negative"]
    assert lab.tests[1].hints == ("negative numbers double too",) and "double(-3)" in lab.tests[1].probe
    assert lab.rules.no_loops and lab.rules.max_lines == 3 and lab.rules.allow_calls == ("len",)
    assert lab.wrong_submissions[0].test == "negative"
    assert lab.module_setup == "import math" and module.setup == "import math"


def test_format_1_infers_the_kind_from_the_fields_as_before(tmp_path):
    repair = PREDICTION.replace("id: p1", "id: r1") + "    solution: y = 1\n    check: assert True\n"
    lab = ("  - id: l1\n    prompt: p\n    starter: x = 1\n    solution: x = 2\n    check: assert x == 2\n"
           "    explanation: e\n    hints: [h]\n")
    module, errors = load(tmp_path, PREDICTION + repair + lab, version=1)
    assert errors == []
    assert [d.kind for d in module.drills] == [DrillKind.PREDICTION, DrillKind.REPAIR, DrillKind.LAB]


def test_a_format_2_key_in_a_format_1_file_says_which_version_it_needs(tmp_path):
    _module, errors = load(tmp_path, PREDICTION.replace("  - id: p1\n", "  - id: p1\n    kind: prediction\n"), 1)
    assert len(errors) == 1
    assert errors[0].field == "drills[0].kind" and "format_version: 2" in errors[0].message
    assert (errors[0].line, errors[0].column) == (5, 5)


def test_a_key_of_another_kind_names_the_kind_it_goes_with(tmp_path):
    # format 2 without `kind:` is a prediction: a starter there is a mistake, said in those words
    _module, errors = load(tmp_path, PREDICTION + "    starter: x = 1\n")
    assert [e.field for e in errors] == ["drills[0].starter"]
    assert "goes with kind: lab" in errors[0].message and "no `kind:`" in errors[0].message
    assert errors[0].line == 14


def test_unknown_drill_kind_is_an_error_at_its_position(tmp_path):
    _module, errors = load(tmp_path, PREDICTION.replace("  - id: p1\n", "  - id: p1\n    kind: puzzle\n"))
    assert errors[0].field == "drills[0].kind" and "puzzle" in errors[0].message and errors[0].line == 5


def test_lab_errors_keep_their_positions(tmp_path):
    broken = (LAB.replace("test: negative", "test: nagative")
              .replace("max_lines: 3", "max_lines: -1")
              .replace("- name: small", "- name: source-rules"))
    _module, errors = load(tmp_path, broken)
    by_field = {e.field: e for e in errors}
    assert "no test named 'nagative'" in by_field["drills[0].wrong_submissions[0].test"].message
    assert by_field["drills[0].rules.max_lines"].line == 21
    assert "reserved" in by_field["drills[0].tests[0].name"].message
    assert all(e.line > 1 for e in errors)


def test_a_lab_needs_tests_or_a_check(tmp_path):
    no_tests = LAB.split("    tests:")[0] + "    explanation: twice x.\n    hints: [multiply]\n"
    _module, errors = load(tmp_path, no_tests)
    assert any("a lab needs `tests:`" in e.message for e in errors)


def test_an_unquoted_hint_with_a_colon_says_yaml_made_it_a_mapping(tmp_path):
    # issue 20: `- band: use …` is a mapping to YAML; "expected non-empty text" alone left authors guessing
    drills = PREDICTION.replace("    hints: [count]\n", "    hints:\n      - band: use the last dimension\n")
    _module, errors = load(tmp_path, drills)
    assert len(errors) == 1
    message = errors[0].message
    assert "YAML read the unquoted text 'band: use the last dimension' as a mapping" in message
    assert '"band: use the last dimension"' in message and errors[0].line == 12


def test_the_builtin_course_loads_with_kinds():
    course = load_course(builtin_course_dir())
    assert not course.all_errors()
    kinds = {d.kind for m in course.modules() for d in m.drills}
    # the first-divergence drills of issue 14 are being written; tests/fixtures/divergence_course has some
    assert kinds | {DrillKind.FIRST_DIVERGENCE} == set(DrillKind)


def test_a_wrong_submission_may_replace_a_stage_it_uses_but_no_other_module(tmp_path):
    # the learner's mistake can sit in the earlier stage this lab extends (35's model.py): declarable
    chained = LAB.replace("id: lab1", "id: lab2").replace("    prompt: Write double(x).\n",
                                                         "    prompt: Use it.\n    uses: [{lab: lab1, as: doubler}]\n")
    stage = chained.replace("      - code: |\n", "      - files: {doubler: \"def double(x):\\n    return x\\n\"}\n"
                                                 "        code: |\n")
    _module, errors = load(tmp_path, LAB + stage)
    assert not [e for e in errors if "wrong_submissions" in e.field], errors
    stray = stage.replace("files: {doubler:", "files: {elsewhere:")
    _module, errors = load(tmp_path, LAB + stray)
    refused = [e.message for e in errors if "wrong_submissions" in e.field]
    assert refused == ["a wrong submission replaces 'elsewhere', which is not one of the lab's `files:` or `uses:` stages"]


RUBRIC_CHECKS = """self_check:
  - id: free
    question: q
    answer: a full answer
    points: ["first point", "second point"]
  - id: bare
    question: q
    answer: a
"""


def test_a_free_text_self_check_declares_its_rubric_points_in_any_format(tmp_path):
    for version in (1, 2, 3):
        module, errors = load(tmp_path, PREDICTION, version=version, extra=RUBRIC_CHECKS)
        assert errors == []
        assert module.self_checks[0].points == ("first point", "second point")
        assert module.self_checks[1].points == ()  # optional: a pack without rubrics validates as before


def test_a_rubric_is_refused_where_it_cannot_be_used(tmp_path):
    one = RUBRIC_CHECKS.replace('["first point", "second point"]', '["only one"]')
    _, errors = load(tmp_path, PREDICTION, extra=one)
    assert any("2 to 4 points" in e.message and e.line == 7 for e in errors)
    choice = RUBRIC_CHECKS.replace("    points:", "    options: [x, y]\n    correct: 0\n    points:")
    _, errors = load(tmp_path, PREDICTION, extra=choice)
    assert any("multiple-choice question is judged" in e.message for e in errors)
    long = RUBRIC_CHECKS.replace('"second point"', '"' + "x" * 200 + '"')
    _, errors = load(tmp_path, PREDICTION, extra=long)
    assert any("one short line" in e.message for e in errors)
