"""A non-editable install carries the course and works from any directory."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {str(p.parent.relative_to(ROOT)).replace("/", ".")
             for top in ("tutor", "capstone") for p in (ROOT / top).rglob("__init__.py")}
    assert found | {"tutor.course_data"} == listed


@pytest.mark.slow
def test_wheel_ships_lessons_and_validates_anywhere(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist")], check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for lesson in (ROOT / "lessons").glob("*.yaml"):
        assert f"tutor/course_data/{lesson.name}" in names
    assert "tutor/app/tutor.tcss" in names and "tutor/sandbox/inner/__main__.py" in names
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    done = subprocess.run([sys.executable, "-m", "tutor", "validate"], cwd=elsewhere, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert str(target) in done.stdout  # the packaged course, not the checkout's
    written = sum(1 for line in (ROOT / "lessons" / "course.yaml").read_text().splitlines() if "file:" in line)
    assert f"{written} written" in done.stdout
