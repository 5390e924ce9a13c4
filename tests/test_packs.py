"""A lesson pack installed with pip appears in `courses` and opens with `--course`, under the same rules."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MINI_COURSE

pytestmark = pytest.mark.slow  # a real pip install

PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny-pack"
version = "0.3.1"

[project.entry-points."pytorch_tutor.courses"]
tiny = "tiny_pack"

[tool.setuptools]
packages = ["tiny_pack"]

[tool.setuptools.package-data]
tiny_pack = ["*.yaml"]
"""


@pytest.fixture(scope="module")
def installed_pack(tmp_path_factory):
    """The mini test course as a package (one drill asking for processes), pip-installed into a target."""
    base = tmp_path_factory.mktemp("pack")
    package = base / "src" / "tiny_pack"
    shutil.copytree(MINI_COURSE, package)
    (package / "__init__.py").write_text("raise SystemExit('a pack is never imported by the tutor')\n")
    first = package / "01_first.yaml"
    first.write_text(first.read_text().replace(
        "    explanation: Integer sums accumulate in int64.\n",
        "    explanation: Integer sums accumulate in int64.\n    needs: [processes]\n"))
    (base / "src" / "pyproject.toml").write_text(PYPROJECT)
    site = base / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(site), str(base / "src")], check=True, capture_output=True)
    return site


def tutor(site: Path, *args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(Path(__file__).parents[1])]),
           "PYTORCH_TUTOR_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "tutor", *args], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)


def test_courses_lists_the_installed_pack_with_version_and_grants(installed_pack, tmp_path):
    result = tutor(installed_pack, "courses", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "mini-course" in result.stdout and "Mini course for tests" in result.stdout
    assert "tiny-pack 0.3.1" in result.stdout
    assert "processes" in result.stdout and "01/sum-dtype" in result.stdout
    assert "pytorch-tutor --course mini-course" in result.stdout


def test_course_opens_the_pack_and_its_grants_need_consent(installed_pack, tmp_path):
    shown = tutor(installed_pack, "--course", "mini-course", "progress", home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "First steps" in shown.stdout  # the pack's modules, read from its installed directory
    refused = tutor(installed_pack, "--course", "tiny", "--trust-lessons", "--plain", home=tmp_path)
    assert refused.returncode == 2
    assert "processes" in refused.stderr and "Not allowed" in refused.stderr  # no terminal: no consent


def test_an_unknown_course_is_named(installed_pack, tmp_path):
    result = tutor(installed_pack, "--course", "nope", "progress", home=tmp_path)
    assert result.returncode == 2
    assert "no installed course 'nope'" in result.stderr and "mini-course" in result.stderr
    assert "Traceback" not in result.stderr


def test_courses_warns_about_a_pack_that_installs_a_pth_file_or_other_entry_points(tmp_path):
    """The installed form pip leaves (a dist-info with RECORD and entry_points.txt), written by hand: quick."""
    site = tmp_path / "site"
    shutil.copytree(MINI_COURSE, site / "sly_pack")
    (site / "sly.pth").write_text("import os\n")  # in a PYTHONPATH dir: not processed, only listed
    info = site / "sly_pack-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sly-pack\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytorch_tutor.courses]\nsly = sly_pack\n\n"
                                           "[console_scripts]\nsly = sly_pack:main\n\n[pytest11]\nsly = sly_pack\n")
    (info / "RECORD").write_text("sly.pth,,\nsly_pack/course.yaml,,\nsly_pack-1.0.dist-info/METADATA,,\n")
    result = tutor(site, "courses", home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stdout.splitlines() if line.startswith("WARNING: sly-pack")]
    assert len(warnings) == 3, result.stdout
    assert "sly.pth" in warnings[0] and "every Python process" in warnings[0]
    assert "'console_scripts'" in warnings[1] and "'pytest11'" in warnings[2]
    assert "pytorch_tutor.courses" not in result.stdout.split("WARNING")[-1].split("\n")[0]
    assert "mini-course" in result.stdout


def test_courses_warns_about_nothing_for_a_plain_pack(installed_pack, tmp_path):
    result = tutor(installed_pack, "courses", home=tmp_path)
    assert result.returncode == 0 and "WARNING" not in result.stdout, result.stdout
