"""A repair's `wrong_submissions:` (issue 30): read in format 2, graded by its `check`, errors at their line."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

from tests.conftest import MINI_COURSE
from tutor.commands.authoring import validate
from tutor.course.loader import load_module_file

REPAIR = """\
  - id: r1
    kind: repair
    prompt: Give the row means as a 1-D tensor.
    setup: import torch
    code: |
      x = torch.ones(2, 3)
      m = x.mean(dim=1, keepdim=True)
    solution: |
      x = torch.ones(2, 3)
      m = x.mean(dim=1)
    ask:
      - {expr: m.shape, kind: shape}
    check: assert m.shape == (2,), "one mean per row, in a 1-D tensor"
    explanation: keepdim keeps the reduced dimension.
    hints: [keepdim]
    wrong_answers:
      - {answer: "(2,)", misconception: keepdim does nothing}
    wrong_submissions:
      - change: [{from: "dim=1)", to: "dim=0)"}]
        test: check
        says: one mean per row
        misconception: dim names the dimension that is kept
"""
SECOND = """\
      - code: |
          x = torch.ones(2, 3)
          m = x.mean(dim=1, keepdim=True).T
        test: check
        says: 1-D tensor
        misconception: a transposed column is a row
"""


def load(tmp_path: Path, drills: str, version: int = 2):
    path = tmp_path / "m.yaml"
    path.write_text(f'format_version: {version}\nmodule: "01"\ndrills:\n{drills}')
    return load_module_file(path)


def test_a_repair_reads_its_wrong_fixes_as_edits_of_the_solution_or_whole_code(tmp_path):
    module, errors = load(tmp_path, REPAIR + SECOND)
    assert errors == []
    first, second = module.drills[0].wrong_submissions
    assert "m = x.mean(dim=0)" in first.code and first.test == "check" and first.says == "one mean per row"
    assert second.code.endswith(".T\n") and second.misconception == "a transposed column is a row"


def test_a_wrong_fix_must_name_the_check_and_pin_its_words_at_its_line(tmp_path):
    _m, errors = load(tmp_path, REPAIR.replace("test: check", "test: shape").replace("        says: one mean per row\n", ""))
    by_field = {e.field: e for e in errors}
    assert "write `test: check`, not 'shape'" in by_field["drills[0].wrong_submissions[0].test"].message
    assert by_field["drills[0].wrong_submissions[0].test"].line == 23  # the `test:` line of the wrong fix
    assert "(`says:`)" in by_field["drills[0].wrong_submissions[0]"].message


def test_a_repair_has_no_other_files_to_replace(tmp_path):
    _m, errors = load(tmp_path, REPAIR.replace("        test: check\n", "        test: check\n        files: {helper: x = 1}\n"))
    assert any("a repair has one file" in e.message for e in errors), errors


def test_format_1_packs_are_unchanged_the_key_needs_format_2(tmp_path):
    v1 = REPAIR.replace("    kind: repair\n", "")
    _m, errors = load(tmp_path, v1, version=1)
    assert [e.field for e in errors] == ["drills[0].wrong_submissions"]
    assert "needs format_version: 2" in errors[0].message
    _m, errors = load(tmp_path, v1[:v1.index("    wrong_submissions:")], version=1)
    assert errors == []


def test_validate_warns_on_a_repair_with_fewer_than_two_without_failing(tmp_path):
    root = tmp_path / "course"
    shutil.copytree(MINI_COURSE, root)
    (root / "04_after.yaml").write_text(f'format_version: 2\nmodule: "04"\ndrills:\n{REPAIR}')
    out = io.StringIO()
    assert validate([root], out) == 0, out.getvalue()
    assert ("04_after.yaml:4: warning: drill 'r1': a repair with 1 wrong submission: declare at least 2"
            in out.getvalue()), out.getvalue()
    (root / "04_after.yaml").write_text(f'format_version: 2\nmodule: "04"\ndrills:\n{REPAIR}{SECOND}')
    out = io.StringIO()
    assert validate([root], out) == 0, out.getvalue()
    assert "'r1'" not in out.getvalue()
