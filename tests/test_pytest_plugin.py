"""`pytest --lessons DIR` (the pytest11 plugin): each drill its own test; a failing drill names itself."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tutor.cli import main

pytestmark = pytest.mark.slow  # the drills run in the sandbox


def run_pytest(cwd, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)


def test_every_drill_is_an_item_and_a_failing_one_names_itself(tmp_path):
    assert main(["new", "course", str(tmp_path / "pk")]) == 0
    module = tmp_path / "pk" / "pk" / "01_first_steps.yaml"
    # a "wrong" answer the judge accepts: check's own failure, now one test's
    module.write_text(module.read_text().replace("        answer: float32", "        answer: int64"))
    (tmp_path / "pk" / "pk" / "02_broken.yaml").write_text("format_version: 2\nmodule: '02'\ndrills: nope\n")
    course = tmp_path / "pk" / "pk" / "course.yaml"
    course.write_text(course.read_text() + '  - {id: "02", part: basics, requires: [], title: Two, file: 02_broken.yaml}\n')

    result = run_pytest(tmp_path, "--lessons", "pk/pk")
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "PASSED" in out and "01/row-means" in out and "01/write-relu" in out
    assert "FAILED" in out and "01/integer-sum" in out
    assert "wrong answer 'int64' for 's.dtype' is accepted" in out
    # a module that does not load is a failing item carrying its errors (file:line and the field)
    assert "::load" in out and "02_broken.yaml:3" in out
    assert "2 failed, 2 passed" in out

    only = run_pytest(tmp_path, "--lessons", "pk/pk", "-k", "write-relu")
    assert only.returncode == 0 and "1 passed, 3 deselected" in only.stdout
