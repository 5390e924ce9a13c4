"""A course's shared code, read as text only: helper modules and chained labs' stages, with positions."""

from __future__ import annotations

import shutil
from pathlib import Path

from tutor.course.loader import load_course, load_module_file_in_course

PACK = Path(__file__).resolve().parent.parent / "fixtures" / "puzzle_labs"


def copy_pack(tmp_path: Path) -> Path:
    root = tmp_path / "pack"
    shutil.copytree(PACK, root)
    return root


def test_helpers_reach_every_drill_and_stages_resolve_to_their_references():
    course = load_course(PACK)
    assert not course.all_errors()
    assert [name for name, _ in course.helpers] == ["puzzles"]
    module = course.slot("1").module
    assert all(d.helpers[:len(course.helpers)] == course.helpers for d in module.drills)
    assert all(d.helpers == course.helpers for d in module.drills if not d.data)  # a data drill also gets its files
    bincount = module.drill("bincount")
    assert [(s.name, s.drill_id) for s in bincount.stages] == [("puzzle_ones", "ones"), ("puzzle_eye", "eye")]
    assert bincount.stages[1].reference == module.drill("eye").solution


def test_a_helper_that_would_hide_a_module_or_does_not_parse_is_an_error_at_its_line(tmp_path):
    root = copy_pack(tmp_path)
    (root / "helpers" / "json.py").write_text("x = 1\n")
    (root / "helpers" / "broken.py").write_text("x = 1\ndef f(:\n")
    (root / "helpers" / "torch.py").write_text("x = 1\n")
    errors = {Path(e.file).name: e for e in load_course(root).errors}
    assert "would hide the module" in errors["json.py"].message and "torch.py" in errors
    assert errors["broken.py"].line == 2 and "syntax error" in errors["broken.py"].message


def test_a_stage_must_be_an_earlier_lab(tmp_path):
    root = copy_pack(tmp_path)
    text = (root / "01_puzzles.yaml").read_text()
    text = text.replace("{lab: eye, as: puzzle_eye}", "{lab: bincount, as: puzzle_eye}")
    text = text.replace("{lab: ones, as: puzzle_ones}", '{lab: "2/ones", as: puzzle_ones}')
    (root / "01_puzzles.yaml").write_text(text)
    messages = [e.message for e in load_course(root).errors]
    assert any("comes at or after this lab" in m for m in messages)
    assert any("no written module '2'" in m for m in messages)


def test_a_stage_name_may_not_be_a_helpers(tmp_path):
    root = copy_pack(tmp_path)
    text = (root / "01_puzzles.yaml").read_text().replace("as: puzzle_eye}", "as: puzzles}")
    (root / "01_puzzles.yaml").write_text(text)
    assert any("may not share a helper's name" in e.message for e in load_course(root).errors)


def test_one_module_file_of_a_course_is_read_with_the_courses_helpers_and_stages():
    module, errors = load_module_file_in_course(PACK / "01_puzzles.yaml")
    assert errors == [] and module.drill("bincount").stages and module.drill("ones").helpers


def test_a_helper_may_take_a_stale_sandbox_name_but_not_an_installed_module_or_the_data_module(tmp_path):
    root = copy_pack(tmp_path)
    for name in ("jail", "child", "sympy", "yaml", "course_files"):  # the first two were sandbox modules once
        (root / "helpers" / f"{name}.py").write_text("x = 1\n")
    refused = {Path(e.file).stem for e in load_course(root).errors if "would hide the module" in e.message}
    assert refused == {"sympy", "yaml", "course_files"}


def test_a_later_lab_may_extend_an_earlier_stage_and_another_may_take_it_as_of_that_lab(tmp_path):
    """35's KV cache extends 32's model.py: the stage a learner who took the reference gets is that
    lab's solution with the later lab's edits, and a lab after both names the one whose edits apply."""
    root = copy_pack(tmp_path)
    text = (root / "01_puzzles.yaml").read_text()
    text = text.replace("{lab: eye, as: puzzle_eye}",
                        '{lab: eye, as: puzzle_eye, change: [{from: "def eye(j):", to: "def eye(j):  # extended"}]}')
    (root / "01_puzzles.yaml").write_text(text)
    course = load_course(root)
    assert not course.all_errors(), course.all_errors()
    module = course.slot("1").module
    stage = module.drill("bincount").stages[1]
    assert stage.reference == module.drill("eye").solution.replace("def eye(j):", "def eye(j):  # extended")


def test_an_edit_of_a_stage_that_does_not_apply_once_is_an_error_at_the_lab(tmp_path):
    root = copy_pack(tmp_path)
    text = (root / "01_puzzles.yaml").read_text()
    text = text.replace("{lab: eye, as: puzzle_eye}",
                        '{lab: eye, as: puzzle_eye, change: [{from: "not in the solution", to: "x"}]}')
    (root / "01_puzzles.yaml").write_text(text)
    errors = load_course(root).all_errors()
    assert any(e.field == "bincount.uses" and "exactly once" in e.message for e in errors), errors
    text = text.replace('change: [{from: "not in the solution", to: "x"}]', 'as_of: "ones"')
    (root / "01_puzzles.yaml").write_text(text)
    errors = load_course(root).all_errors()
    assert any("ones changes no stage 'eye'" in e.message for e in errors), errors


def test_a_modules_rules_apply_to_each_lab_that_declares_none(tmp_path):
    """Issue 33: the Autodiff-Puzzles port repeated one allow-list on every lab; `rules:` at the top of a
    module is every lab's unless the lab declares its own, which replace them whole."""
    root = copy_pack(tmp_path)
    module_file = root / "01_puzzles.yaml"
    text = module_file.read_text()
    text = text.replace("\ndrills:\n", "\nrules: {forbid_names: [torch.autograd], max_lines: 9}\n\ndrills:\n", 1)
    rowsum = text.index("  - id: rowsum")
    own_rules = ("    rules: {allow_names: [arange, where], allow_calls: [arange, where], allow_attributes: [shape],\n"
                 "            no_loops: true, no_comprehensions: true, max_lines: 3, max_columns: 100}\n")
    assert text.index(own_rules, rowsum) > rowsum
    text = text[:rowsum] + text[rowsum:].replace(own_rules, "", 1)  # rowsum now declares no rules of its own
    module_file.write_text(text)
    course = load_course(root)
    assert not course.all_errors(), course.all_errors()
    module = course.slot("1").module
    own = module.drill("ones").rules  # the fixture's labs declare their own rules: those stay
    assert own is not None and own.max_lines == 3
    inherited = module.drill("rowsum").rules
    assert inherited is not None and inherited.max_lines == 9 and inherited.forbid_names == ("torch.autograd",)
