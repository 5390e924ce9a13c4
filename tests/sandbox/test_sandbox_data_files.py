"""A course's data files inside the sandbox: readable by their declared name, read-only, nothing beside them.

Run in each tier for real (tier 1; tier 2 as root with namespaces forbidden; tier 2 as a
fresh non-root uid), with the sandbox made as a course's is: ``grants.code_dirs`` shows
the course's data/ directory read-only and nothing else of the course.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from tutor.course import grants
from tutor.course.data_files import MODULE, module_source
from tutor.sandbox.client import Sandbox, run_sync
from tutor.sandbox.wire import RunRequest

pytestmark = pytest.mark.slow

CONTENT = '{"cases": [[1, 2], [3, 4]]}'
CODE = f"""
import {MODULE}
text = {MODULE}.read_text("cases.json")
try:
    with open({MODULE}.path("cases.json"), "a") as f:
        f.write("changed")
    wrote = "yes"
except OSError as exc:
    wrote = type(exc).__name__
try:
    open(SOLUTIONS).read()
    leaked = "yes"
except OSError as exc:
    leaked = type(exc).__name__
try:
    {MODULE}.path("../solutions.yaml")
    undeclared = "served"
except FileNotFoundError:
    undeclared = "refused"
"""


@pytest.fixture(scope="module")
def course():
    """A course directory any uid can read (the real tier 2 runs as a fresh one)."""
    root = Path(tempfile.mkdtemp(prefix="pytorch-tutor-data-test-"))
    (root / "data").mkdir()
    (root / "data" / "cases.json").write_text(CONTENT)
    (root / "solutions.yaml").write_text("the answers\n")
    for path in (root, root / "data"):
        os.chmod(path, 0o755)
    for path in (root / "data" / "cases.json", root / "solutions.yaml"):
        os.chmod(path, 0o644)
    yield root
    shutil.rmtree(root)


@pytest.fixture(scope="module", params=["tier1", "tier2", "tier2-real"])
def box(request, course):
    python = {"tier1": sys.executable, "tier2": "forbidding_python", "tier2-real": "real_tier2_python"}[request.param]
    if python != sys.executable:
        python = request.getfixturevalue(python)
    sandbox = Sandbox(python=python, read_only=grants.code_dirs(course))
    wanted = "1" if request.param == "tier1" else "2"
    if sandbox.choose_tier() != wanted:
        pytest.skip(f"{request.param} is not available here (tier {sandbox.tier_level})")
    sandbox.start_sync()
    yield sandbox
    sandbox.close_sync()


def test_a_declared_data_file_is_read_by_its_name_never_written_and_nothing_beside_it_is_seen(box, course):
    served = module_source({"cases.json": str((course / "data" / "cases.json").resolve())})
    result = run_sync(RunRequest(code=CODE, setup=f"SOLUTIONS = {str(course / 'solutions.yaml')!r}",
                                 modules=((MODULE, served),)), box)
    assert result.ok and result.observation.error is None, (result.message, result.observation)
    seen = {name: value.get("value") for name, value in result.observation.variables.items()}
    assert seen["text"] == CONTENT
    assert seen["wrote"] in ("OSError", "PermissionError"), seen  # read-only: EROFS in tier 1, EACCES in tier 2
    assert seen["leaked"] in ("FileNotFoundError", "PermissionError"), seen
    assert seen["undeclared"] == "refused"
    assert (course / "data" / "cases.json").read_text() == CONTENT


SWAPPED = """
import os
try:
    secret = open(os.path.join(DATA, "secret.txt")).read()
except OSError as exc:
    secret = type(exc).__name__
try:
    cases = open(os.path.join(DATA, "cases.json")).read()
except OSError as exc:
    cases = type(exc).__name__
"""


@pytest.mark.parametrize("tier", ["tier1", "tier2-real"])
def test_a_data_directory_swapped_for_a_link_after_the_check_shows_nothing_new(tier, request, tmp_path):
    """The sandbox holds the data/ directory it checked; a link put in its place later is never followed."""
    root = tmp_path / "course"
    elsewhere = tmp_path / "elsewhere"
    for directory in (root / "data", elsewhere):
        directory.mkdir(parents=True)
    (root / "data" / "cases.json").write_text(CONTENT)
    (elsewhere / "secret.txt").write_text("outside the course\n")
    for path in (tmp_path, root, root / "data", elsewhere):
        os.chmod(path, 0o755)
    for path in (root / "data" / "cases.json", elsewhere / "secret.txt"):
        os.chmod(path, 0o644)
    python = sys.executable if tier == "tier1" else request.getfixturevalue("real_tier2_python")
    sandbox = Sandbox(python=python, read_only=grants.code_dirs(root))
    try:
        if sandbox.choose_tier() != tier[4]:
            pytest.skip(f"{tier} is not available here (tier {sandbox.tier_level})")
        data = str((root / "data").resolve())
        (root / "data").rename(root / "data.checked")  # between the check and the zygote's mount: a swap
        (root / "data").symlink_to(elsewhere)
        (elsewhere / "cases.json").write_text("swapped")
        os.chmod(elsewhere / "cases.json", 0o644)
        sandbox.start_sync()
        result = run_sync(RunRequest(code=SWAPPED, setup=f"DATA = {data!r}"), sandbox)
        if tier == "tier1":  # the held directory is the only one mounted there: a link in its place stops the run
            assert result.status == "failed_to_start", (result.status, result.observation)
            assert "was replaced since the sandbox checked it" in result.message, result.message
        else:  # the path now leads elsewhere, where Landlock (its rule on the held directory) allows nothing
            assert result.ok and result.observation.error is None, (result.message, result.observation)
            seen = {name: value.get("value") for name, value in result.observation.variables.items()}
            assert seen["secret"] == seen["cases"] == "PermissionError", seen
    finally:
        sandbox.close_sync()
