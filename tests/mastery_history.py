"""A course with mechanism tags and a history that reveals a misconception (tests of the weakest
mechanisms and the weak-spot queue, tutor/progress/mastery.py)."""

from __future__ import annotations

import shutil

import pytest

from tutor.course.loader import load_course
from tutor.progress.store import Attempt, ProfileStore


@pytest.fixture
def tagged_course(tmp_path, mini_course_dir):
    """The mini course with mechanism tags: two drills on `dtype` in modules 01 and 02."""
    root = tmp_path / "course"
    shutil.copytree(mini_course_dir, root)
    first = root / "01_first.yaml"
    first.write_text(first.read_text().replace(
        "  - id: sum-dtype\n", "  - id: sum-dtype\n    tags: [dtype]\n").replace(
        "  - id: transpose-strides\n", "  - id: transpose-strides\n    tags: [strides]\n"))
    second = root / "02_second.yaml"
    second.write_text(second.read_text().replace("  - id: view-error\n", "  - id: view-error\n    tags: [dtype]\n"))
    course = load_course(root)
    assert not course.all_errors(), course.all_errors()
    assert [d.tags for d in course.modules()[0].drills] == [("strides",), ("dtype",)]
    return root


def record_history(store: ProfileStore) -> None:
    """sum-dtype answered with its declared misconception (as the tutoring service records a verdict),
    transpose-strides right."""
    store.record(Attempt("01", "transpose-strides", "prediction", True,
                         verdict={"y.stride()": {"correct": True, "divergence": "", "misconception": ""}}))
    store.record(Attempt("01", "sum-dtype", "prediction", False, answers={"s.dtype": "float32"},
                         verdict={"s.dtype": {"correct": False, "divergence": "", "misconception": "sums become floats"},
                                  "s.item()": {"correct": True, "divergence": "", "misconception": ""}}))
