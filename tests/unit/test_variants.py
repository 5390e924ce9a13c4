"""Drill variants (format 3): the `variants:` block read at file:line, safe constraints, seeded instances."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.cli import main
from tutor.course.loader import load_module_file
from tutor.course.variants import present_drill_instance

DRILL = """\
format_version: 3
module: vtest
drills:
  - id: shape
    variants:
      params:
        rows: [2, 3, 4]
        cols: {range: [2, 6]}
        dim: [0, 1]
      where: "rows != cols"
      corners: [{rows: 2, cols: 5, dim: 0}]
    prompt: A {{rows}}x{{cols}} tensor summed over dim {{dim}}.
    code: |
      x = torch.arange({{rows}} * {{cols}}).reshape({{rows}}, {{cols}})
      y = x.sum(dim={{dim}})
      d = {"a": 1}
    ask:
      - expr: y.shape
        kind: shape
    explanation: Summing over dim {{dim}} removes that dimension.
    hints: [Which dimension goes away?]
    wrong_answers:
      - answer: "({{rows}}, {{cols}})"
        misconception: sum keeps dim {{dim}}
"""


def _load(tmp_path: Path, text: str):
    path = tmp_path / "m.yaml"
    path.write_text(text, encoding="utf-8")
    return load_module_file(path)


def _validate(tmp_path: Path, text: str, capsys) -> tuple[int, str]:
    path = tmp_path / "m.yaml"
    path.write_text(text, encoding="utf-8")
    rc = main(["validate", str(path)])
    captured = capsys.readouterr()
    return rc, captured.out + captured.err


def test_instances_respect_params_constraint_and_corners(tmp_path):
    module, errors = _load(tmp_path, DRILL)
    assert errors == []
    spec = module.drills[0].variants
    assert len(spec.instances) == 3 * 5 * 2 - 3 * 2  # rows == cols excluded for 2, 3, 4
    assert all(dict(i)["rows"] != dict(i)["cols"] for i in spec.instances)
    assert spec.corners == ((("rows", 2), ("cols", 5), ("dim", 0)),)
    sample = spec.sample(seed=7, count=3)
    assert sample[0] == spec.corners[0] and len(set(sample)) == 4


def test_an_attempt_sees_every_text_rendered_for_its_seed(tmp_path):
    drill = _load(tmp_path, DRILL)[0].drills[0]
    seen = set()
    for seed in range(40):
        shown = present_drill_instance(drill, seed)
        assert shown == present_drill_instance(drill, seed)  # the recorded seed gives the same instance back
        rows, cols, dim = (dict(shown.instance)[k] for k in ("rows", "cols", "dim"))
        assert shown.prompt == f"A {rows}x{cols} tensor summed over dim {dim}."
        assert f"reshape({rows}, {cols})" in shown.code and f"sum(dim={dim})" in shown.code
        assert 'd = {"a": 1}' in shown.code  # Python's own braces are untouched
        assert shown.explanation == f"Summing over dim {dim} removes that dimension."
        assert shown.wrong_answers[0].answer == f"({rows}, {cols})"
        assert shown.asks[0].key == drill.asks[0].key  # progress and misconception matching keep their key
        assert "{{" not in shown.code + shown.prompt + shown.explanation
        seen.add(shown.instance)
    assert len(seen) > 5


def test_a_drill_without_variants_is_presented_unchanged(tmp_path):
    text = DRILL.replace(DRILL[DRILL.index("    variants:"):DRILL.index("    prompt:")], "")
    text = text.replace("{{rows}}", "2").replace("{{cols}}", "3").replace("{{dim}}", "0")
    drill = _load(tmp_path, text)[0].drills[0]
    assert drill.variants is None and present_drill_instance(drill, 5) is drill


def test_validate_reports_undeclared_and_unused_parameters_at_file_line(tmp_path, capsys):
    text = DRILL.replace("dim: [0, 1]", "dim: [0, 1]\n        step: [1, 2]").replace(
        "explanation: Summing over dim {{dim}}", "explanation: Summing over dim {{dimm}}").replace(
        "dim: 0}]", "dim: 0, step: 1}]")
    rc, out = _validate(tmp_path, text, capsys)
    assert rc == 1
    assert "m.yaml:21:" in out and "`{{dimm}}` names no parameter" in out
    assert "parameter 'step' is used nowhere" in out


@pytest.mark.parametrize("where, says", [
    ("__import__('os').system('touch pwned')", "Call is not allowed"),
    ("rows.__class__", "Attribute is not allowed"),
    ("(lambda: 1)()", "is not allowed"),
    ("rows ** 999999", "only + - * / // % are allowed"),
    ("size != 2", "'size' is not a declared parameter"),
])
def test_a_constraint_outside_the_grammar_is_refused_not_evaluated(tmp_path, capsys, monkeypatch, where, says):
    monkeypatch.chdir(tmp_path)
    rc, out = _validate(tmp_path, DRILL.replace('"rows != cols"', repr(where).replace("\\'", "'")), capsys)
    assert rc == 1 and "m.yaml:10:" in out and says in out
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("change, says", [
    (("cols: {range: [2, 6]}", "cols: {range: [6, 2]}"), "a range is {range: [low, high]}"),
    (("rows: [2, 3, 4]", "rows: [2, 2]"), "distinct values"),
    (("corners: [{rows: 2, cols: 5, dim: 0}]", "corners: [{rows: 2, cols: 2, dim: 0}]"), "not an instance"),
    (('"rows != cols"', '"rows == 2 and cols == 5 and dim == 0"'), "only 1 instance(s)"),
    (("format_version: 3", "format_version: 2"), "`variants` needs format_version: 3"),
])
def test_a_bad_variants_block_is_reported_at_its_line(tmp_path, capsys, change, says):
    rc, out = _validate(tmp_path, DRILL.replace(*change), capsys)
    assert rc == 1 and says in out and "m.yaml:" in out


def test_code_is_syntax_checked_as_an_instance(tmp_path, capsys):
    # `torch.{{dtype}}` is not Python until rendered: the syntax check compiles the first instance
    text = DRILL.replace("dim: [0, 1]", "dim: [0, 1]\n        dtype: [float32, int64]").replace(
        "dim: 0}]", "dim: 0, dtype: float32}]").replace(
        "d = {\"a\": 1}", "z = x.to(torch.{{dtype}})")
    assert _load(tmp_path, text)[1] == []
    rc, out = _validate(tmp_path, text.replace("x.to(torch.{{dtype}})", "x.to(torch.{{dtype}}"), capsys)
    assert rc == 1 and "Python syntax error" in out


def test_format_2_files_keep_double_braces_as_python(tmp_path):
    text = DRILL.replace("format_version: 3", "format_version: 2")
    text = text.replace(text[text.index("    variants:"):text.index("    prompt:")], "")
    text = text.replace('d = {"a": 1}', 'label = f"{{literal}}"').replace("{{rows}}", "2").replace(
        "{{cols}}", "3").replace("{{dim}}", "0")
    assert _load(tmp_path, text)[1] == []


@pytest.mark.slow
def test_check_proves_every_sampled_instance_and_refuses_a_variant_that_changes_nothing(tmp_path, capsys):
    """One `check` run (one sandbox start) over three packs: a good variant, one whose answers never move,
    and one whose claim fails on a single instance (named in the report)."""
    good = DRILL.replace("    code: |", "    setup: import torch\n    code: |")
    same = good.replace("module: vtest", "module: vsame").replace("sum(dim={{dim}})", "sum(dim={{dim}}).sum()")
    failing = good.replace("module: vtest", "module: vfail").replace(
        "    ask:", '    check: assert {{rows}} < 4, "too many rows"\n    ask:')
    paths = []
    for name, text in (("good", good), ("same", same), ("fail", failing)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "m.yaml").write_text(text, encoding="utf-8")
        paths.append(str(tmp_path / name / "m.yaml"))
    rc = main(["check", *paths])
    out = capsys.readouterr().out
    assert rc == 1
    assert "ok   vtest/shape" in out
    assert "FAIL vsame/shape" in out and "all observe the same answers" in out
    assert "FAIL vfail/shape" in out and "instance rows=4, cols=" in out and "too many rows" in out


def test_a_variant_drill_loads_as_its_base_instance_and_redraws_from_its_template(tmp_path):
    drill = _load(tmp_path, DRILL)[0].drills[0]
    assert drill.instance == (("rows", 2), ("cols", 5), ("dim", 0))  # the corner: paths that never draw run real code
    assert "{{" not in drill.code + drill.prompt and "reshape(2, 5)" in drill.code
    other = next(present_drill_instance(drill, s) for s in range(50)
                 if present_drill_instance(drill, s).instance != drill.instance)
    assert "{{" not in other.code and present_drill_instance(other, 3) == present_drill_instance(drill, 3)


def test_a_placeholder_may_be_an_expression_over_the_parameters(tmp_path, capsys):
    text = DRILL.replace("explanation: Summing over dim {{dim}} removes that dimension.",
                         "explanation: \"Summing over dim {{dim}} leaves {{cols * (1 - dim) + rows * dim}} sums "
                         "of a {{rows * cols}}-element tensor.\"")
    module, errors = _load(tmp_path, text)
    assert errors == []
    drill = present_drill_instance(module.drills[0], 3)
    values = dict(drill.instance)
    left = values["cols"] if values["dim"] == 0 else values["rows"]
    assert f"leaves {left} sums of a {values['rows'] * values['cols']}-element tensor" in drill.explanation


@pytest.mark.parametrize("placeholder, says", [
    ("{{rows * colz}}", "`{{colz}}` names no parameter"),
    ("{{rows ** 2}}", "only + - * / // % are allowed"),
    ("{{len(rows)}}", "Call is not allowed"),
    ("{{rows +}}", "not an expression"),
])
def test_a_bad_placeholder_expression_is_reported_at_its_line(tmp_path, capsys, placeholder, says):
    text = DRILL.replace("explanation: Summing over dim {{dim}} removes that dimension.",
                         f"explanation: \"Dim {{{{dim}}}}: {placeholder}\"")
    rc, out = _validate(tmp_path, text, capsys)
    assert rc == 1 and says in out and "m.yaml:" in out


REPAIR = """\
format_version: 3
module: vrep
drills:
  - id: centre
    kind: repair
    variants:
      params:
        n: [3, 4, 5]
    prompt: "`centre` should leave its {{n}}-element input alone."
    setup: import torch
    code: |
      def centre(t):
          t -= t.mean()
          return t

      data = torch.arange({{n}}.)
      out = centre(data)
    ask:
      - {expr: data.sum().item(), kind: float}
    check: |
      assert torch.equal(data, torch.arange({{n}}.)), "centre() overwrote the caller's {{n}} values"
    solution: |
      def centre(t):
          return t - t.mean()

      data = torch.arange({{n}}.)
      out = centre(data)
    explanation: In place on the caller's tensor.
    hints: [Which op is in place?]
    wrong_answers:
      - {answer: "{{n * (n - 1) // 2}}", misconception: the caller's tensor is untouched}
    wrong_submissions:
      - code: |
          def centre(t):
              t -= t.mean()
              return t.clone()

          data = torch.arange({{n}}.)
          out = centre(data)
        test: check
        says: "overwrote the caller's {{n}} values"
        misconception: copying the result after the in-place op protects nothing
"""


def test_a_repair_with_variants_renders_its_wrong_fixes_for_the_instance(tmp_path, capsys):
    module, errors = _load(tmp_path, REPAIR)
    assert errors == []
    drill = present_drill_instance(module.drills[0], 7)
    n = dict(drill.instance)["n"]
    [fix] = drill.wrong_submissions
    assert f"torch.arange({n}.)" in fix.code and fix.says == f"overwrote the caller's {n} values"
    rc, out = _validate(tmp_path, REPAIR.replace("torch.arange({{n}}.)\n          out = centre(data)\n        test",
                                                  "torch.arange({{m}}.)\n          out = centre(data)\n        test"),
                        capsys)
    assert rc == 1 and "`{{m}}` names no parameter" in out and "wrong_submissions[0]" in out


def test_a_placeholder_may_choose_between_two_texts(tmp_path):
    text = DRILL.replace("explanation: Summing over dim {{dim}} removes that dimension.",
                         "explanation: \"Summing removes {{'the rows' if dim == 0 else 'the columns'}}.\"")
    module, errors = _load(tmp_path, text)
    assert errors == []
    for seed in range(6):
        drill = present_drill_instance(module.drills[0], seed)
        wanted = "the rows" if dict(drill.instance)["dim"] == 0 else "the columns"
        assert drill.explanation == f"Summing removes {wanted}."


MOVING_BUG = """\
format_version: 3
module: vtest
drills:
  - id: moving
    kind: first-divergence
    variants:
      params:
        bug: [scale, shift]
    prompt: Where does a contract first fail?
    setup: |
      import torch
      x = torch.ones(3)
    code: |
      a = x * {{-1 if bug == 'scale' else 1}}
      b = a + {{-5 if bug == 'shift' else 1}}
      c = b.sqrt()
    contracts:
      a: {range: [0, 10]}
      b: {range: [0, 10]}
      c: {finite: true}
    answer: "{{1 if bug == 'scale' else 2}}"
    wrong_answers:
      - {answer: 3, misconception: the NaN is made where it shows}
      - {answer: "{{2 if bug == 'scale' else 1}}", misconception: the other line}
    solution: |
      a = x * 1
      b = a + 1
      c = b.sqrt()
    explanation: Line {{1 if bug == 'scale' else 2}} makes a negative value.
    hints: [Which line makes a value below zero?]
    wrong_submissions:
      - code: |
          a = x * {{-1 if bug == 'scale' else 1}}
          b = a + {{-5 if bug == 'shift' else 1}}
          c = b.clamp_min(0).sqrt()
        test: check
        says: "{{'a' if bug == 'scale' else 'b'}} spans"
        misconception: the NaN is repaired where it shows
"""


def test_a_first_divergence_drill_may_move_its_bug_per_instance(tmp_path):
    module, errors = _load(tmp_path, MOVING_BUG)
    assert errors == []
    seen = {}
    for seed in range(8):
        drill = present_drill_instance(module.drills[0], seed)
        bug = dict(drill.instance)["bug"]
        seen[bug] = (drill.divergence.answer_line, [w.answer for w in drill.wrong_answers])
    assert seen == {"scale": (1, ["3", "2"]), "shift": (2, ["3", "1"])}


def test_a_moving_answer_that_reads_as_no_line_is_left_for_check_to_name(tmp_path):
    module, errors = _load(tmp_path, MOVING_BUG.replace("answer: \"{{1 if bug == 'scale' else 2}}\"",
                                                        "answer: \"{{1 if bug == 'scale' else 9}}\""))
    assert errors == []
    shift = next(present_drill_instance(module.drills[0], s) for s in range(8)
                 if dict(present_drill_instance(module.drills[0], s).instance)["bug"] == "shift")
    assert shift.divergence.answer_line is None and shift.divergence.answer_stage == ""


@pytest.mark.slow
def test_check_proves_a_moving_bug_on_each_instance_and_names_the_one_it_misstates(tmp_path, capsys):
    swapped = MOVING_BUG.replace("module: vtest", "module: vswap").replace(
        "answer: \"{{1 if bug == 'scale' else 2}}\"", "answer: \"{{1 if bug == 'scale' else 3}}\"").replace(
        "{answer: 3, misconception: the NaN is made where it shows}", "{answer: 4, misconception: after the NaN}")
    paths = []
    for name, text in (("good", MOVING_BUG), ("swapped", swapped)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "m.yaml").write_text(text, encoding="utf-8")
        paths.append(str(tmp_path / name / "m.yaml"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTORCH_TUTOR_VARIANT_SAMPLE", "4")
        rc = main(["check", *paths])
    out = capsys.readouterr().out
    assert rc == 1
    assert "ok   vtest/moving" in out
    assert "FAIL vswap/moving" in out and "instance bug=shift" in out and "declares line 3" in out
    assert f"at {paths[1]}:4" in out  # where to edit: the failing drill's first line (its `- id:`)


@pytest.mark.slow
def test_check_proves_a_first_divergence_drills_wrong_repair_is_rejected_by_a_contract(tmp_path, capsys):
    """A first-divergence drill's repair is judged by its contracts on the final values: a wrong repair (the NaN
    clamped where it shows) must break one, with the words `says:` pins; one that keeps them all is a hole."""
    hole = MOVING_BUG.replace("module: vtest", "module: vhole").replace("c = b.clamp_min(0).sqrt()", "c = b.sqrt()").replace(
        "a = x * {{-1 if bug == 'scale' else 1}}\n          b = a + {{-5 if bug == 'shift' else 1}}\n          c = b.sqrt()",
        "a = x * 1\n          b = a + 1\n          c = b.sqrt()")
    (tmp_path / "hole").mkdir()
    (tmp_path / "hole" / "m.yaml").write_text(hole, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTORCH_TUTOR_VARIANT_SAMPLE", "2")
        rc = main(["check", str(tmp_path / "hole" / "m.yaml")])
    out = capsys.readouterr().out
    assert rc == 1 and "FAIL vhole/moving" in out and "wrong fix 1" in out and "the check accepts it" in out


@pytest.mark.parametrize("extra, says", [
    ('    vary: "the version string is one fixed fact of this build"\n', None),
    ('    vary: fixed\n', "say in a sentence why no instance"),
])
def test_a_drill_without_variants_may_say_why_and_validate_reads_it(tmp_path, extra, says):
    text = DRILL.replace('''    variants:
      params:
        rows: [2, 3, 4]
        cols: {range: [2, 6]}
        dim: [0, 1]
      where: "rows != cols"
      corners: [{rows: 2, cols: 5, dim: 0}]
''', extra).replace("{{rows}}", "2").replace("{{cols}}", "5").replace("{{dim}}", "0")
    module, errors = _load(tmp_path, text)
    if says is None:
        assert errors == [] and module.drills[0].vary.startswith("the version string")
    else:
        assert any(says in e.message and e.field.endswith("vary") for e in errors), errors


def test_vary_and_variants_together_are_an_error(tmp_path):
    text = DRILL.replace("    prompt: A {{rows}}", '    vary: "nothing here can vary at all"\n    prompt: A {{rows}}')
    _module, errors = _load(tmp_path, text)
    assert any("`vary:` says why one has none" in e.message for e in errors), errors
