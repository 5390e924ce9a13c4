"""`check` runs a repair's wrong fixes through the learner's path and proves each rejected as declared (issue 30)."""

from __future__ import annotations

import io
import shutil

import pytest

from tests.conftest import MINI_COURSE
from tests.unit.test_repair_wrong_fixes_schema import REPAIR, SECOND
from tutor.cli import main

pytestmark = pytest.mark.slow

HOLES = """\
      - code: |
          x = torch.ones(2, 3)
          m = x.mean(dim=1, keepdim=True).reshape(2)
        test: check
        says: one mean per row
        misconception: declared wrong, but the check accepts it
      - code: |
          x = torch.ones(2, 3)
          m = x.mean(dim=1).tolist()
        test: check
        says: one mean per row
        misconception: the check itself raises on a list
      - change: [{from: "dim=1)", to: "dim=0)"}]
        test: check
        says: two means
        misconception: rejected, but not with the words declared
"""


def run_check(tmp_path, drills: str, capsys) -> tuple[int, str]:
    root = tmp_path / "course"
    shutil.copytree(MINI_COURSE, root)
    module = root / "04_after.yaml"
    module.write_text(f'format_version: 2\nmodule: "04"\ndrills:\n{drills}')
    code = main(["check", str(module)])
    return code, capsys.readouterr().out


def test_check_proves_each_wrong_fix_and_names_each_one_that_is_not_rejected_as_declared(tmp_path, capsys):
    code, out = run_check(tmp_path, REPAIR + SECOND + HOLES, capsys)
    assert code == 1, out
    assert "wrong fix 3 (declared wrong, but the check accepts it): the check accepts it" in out
    assert ("wrong fix 4 (the check itself raises on a list): the check did not reject "
            "it by its assertion but error: line 1: AttributeError") in out
    assert ("wrong fix 5 (rejected, but not with the words declared): the learner is told 'line 1: one mean per "
            "row, in a 1-D tensor', which does not say 'two means'") in out
    assert "wrong fix 1 " not in out and "wrong fix 2 " not in out  # the two real ones are proved
    # (a repair whose wrong fixes all hold passes check: tests/test_scaffold.py, whose repair declares two)
