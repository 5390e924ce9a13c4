"""Shared fixtures: every test gets its own profile home; courses are loaded fresh."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.course.loader import load_course

FIXTURES = Path(__file__).parent / "fixtures"
MINI_COURSE = FIXTURES / "mini_course"


@pytest.fixture(autouse=True)
def tutor_home(tmp_path, monkeypatch):
    home = tmp_path / "tutor-home"
    monkeypatch.setenv("PYTORCH_TUTOR_HOME", str(home))
    return home


@pytest.fixture
def mini_course_dir() -> Path:
    return MINI_COURSE


@pytest.fixture
def mini_course():
    course = load_course(MINI_COURSE)
    assert not course.all_errors(), course.all_errors()
    return course
