"""A lab's reference is out of reach of the learner's process, and within the judge's.

A stage lab's ``forbid_modules`` names its reference (and what imports it); the sandbox shows
the course's package read-only to every run, so ``Sandbox.run`` hides those files from the
learner's half of the lab's run: no import, no read, no bytecode. The judge's half and every
other run still read them. Run for real in tier 1 and in tier 2 (namespaces forbidden, and as
a fresh non-root uid).
"""

from __future__ import annotations

import os
import py_compile
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from tutor.sandbox.client import Sandbox, run_sync
from tutor.sandbox.wire import RunRequest
from tutor.sandbox.wire import TestSpec as LabTest

pytestmark = pytest.mark.slow

REFERENCE = "def answer():\n    return 42\n"
HELPER = "SIZE = 7\n"

LEARNER = """
import importlib, marshal, os, sys
sys.path.insert(0, PARENT)
import refpkg.helper
size = refpkg.helper.SIZE

def attempt(step):
    try:
        return repr(step())
    except OSError as exc:
        return type(exc).__name__

imported = attempt(lambda: importlib.import_module("refpkg.reference").answer())
read = attempt(lambda: open(os.path.join(PARENT, "refpkg", "reference.py")).read())
cache = os.path.join(PARENT, "refpkg", "__pycache__")
compiled = attempt(lambda: [open(os.path.join(cache, n), "rb").read() for n in sorted(os.listdir(cache))])
listed = sorted(os.listdir(os.path.join(PARENT, "refpkg")))
"""

JUDGE = """
import sys
sys.path.insert(0, PARENT)
import refpkg.reference
assert refpkg.reference.answer() == 42, "the judge cannot run the reference"
assert size == 7, size
assert imported == read == compiled == "PermissionError", (imported, read, compiled)
assert "reference.py" in listed, listed  # hidden from reading, not from a listing
"""

FIXTURES = """
import sys
sys.path.insert(0, {parent!r})
import refpkg.reference as reference
ANSWER = reference.answer()
CASES = [ANSWER + i for i in range(3)]
"""

USES_FIXTURES = """
seen = (ANSWER, CASES)
has_reference = "reference" in dir()
"""

FIXTURES_CHECK = """
assert seen == (42, [42, 43, 44]), seen                      # the fixtures' data reached the learner's process
assert has_reference is False, "the reference module reached the learner's process"
assert reference.answer() == 42                               # the judge ran the fixtures itself
"""


@pytest.fixture(scope="module")
def course():
    """A directory holding a package with a reference module, readable by any uid (real tier 2)."""
    root = Path(tempfile.mkdtemp(prefix="pytorch-tutor-hidden-test-"))
    package = root / "refpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "reference.py").write_text(REFERENCE)
    (package / "helper.py").write_text(HELPER)
    py_compile.compile(str(package / "reference.py"), doraise=True)  # a fresh .pyc an import would load
    for path in [root, *root.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    yield root
    shutil.rmtree(root)


@pytest.fixture(scope="module", params=["tier1", "tier2", "tier2-real"])
def box(request, course):
    python = {"tier1": sys.executable, "tier2": "forbidding_python", "tier2-real": "real_tier2_python"}[request.param]
    if python != sys.executable:
        python = request.getfixturevalue(python)
    sandbox = Sandbox(python=python, read_only=[course])
    wanted = "1" if request.param == "tier1" else "2"
    if sandbox.choose_tier() != wanted:
        pytest.skip(f"{request.param} is not available here (tier {sandbox.tier_level})")
    sandbox.start_sync()
    yield sandbox
    sandbox.close_sync()


def lab(course: Path, **changes) -> RunRequest:
    fields = dict(code=LEARNER, setup=f"PARENT = {str(course)!r}", judged=True,
                  tests=(LabTest("reference-out-of-reach", JUDGE, ""),),
                  rules={"forbid_modules": ["refpkg.reference"]})
    return RunRequest(**(fields | changes))


def test_the_learners_process_cannot_import_read_or_load_the_forbidden_reference_and_the_judge_can(box, course):
    result = run_sync(lab(course), box)
    assert result.ok, result.message
    obs = result.observation
    assert obs.error is None, obs.error
    assert {t.name: t.status for t in obs.tests} == {"source-rules": "passed", "reference-out-of-reach": "passed"}, obs.tests


def test_a_labs_fixtures_reach_the_learners_process_as_data_and_the_judge_runs_them(box, course):
    result = run_sync(lab(course, code=USES_FIXTURES, fixtures=FIXTURES.format(parent=str(course)),
                          tests=(LabTest("fixtures", FIXTURES_CHECK, ""),)), box)
    assert result.ok and result.observation.error is None, (result.message, result.observation.error)
    assert {t.name: t.status for t in result.observation.tests}["fixtures"] == "passed", result.observation.tests


def test_fixtures_that_fail_are_the_courses_error_not_the_learners(box, course):
    result = run_sync(lab(course, code=USES_FIXTURES, fixtures="import sys\nANSWER = 1 / 0\n"), box)
    assert result.observation.error is not None and result.observation.error.phase == "setup", result.observation
    assert "fixtures" in result.observation.error.message


def test_a_prediction_run_still_reads_the_reference(box, course):
    plain = run_sync(RunRequest(code=LEARNER, setup=f"PARENT = {str(course)!r}"), box)
    assert plain.ok and plain.observation.variables["read"]["value"] == repr(REFERENCE)


def test_a_hidden_path_outside_the_read_only_directories_is_ignored(box, course, tmp_path):
    """A request names host paths: only those inside a directory the sandbox shows read-only count,
    so a request cannot use the list to cut up the interpreter's own directories."""
    outside = os.path.join(os.path.dirname(os.__file__), "json", "__init__.py")
    result = run_sync(RunRequest(code="import json\nok = json.dumps([1])", hidden=(outside,)), box)
    assert result.ok and result.observation.error is None, result.observation.error
    assert result.observation.variables["ok"]["value"] == "[1]"
