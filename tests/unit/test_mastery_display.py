"""The weakest mechanisms, the misconceptions still held and the drills that would test them, shown by
`stats` (the real command line), plain mode's module list and the app's stats screen."""

from __future__ import annotations

import io
import shutil

import pytest

from tutor.cli import main
from tutor.course.loader import load_course
from tutor.locations import profile_path
from tutor.plain import run_plain
from tutor.progress.store import Attempt, ProfileStore
from tutor.session import Session


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


def _record_history(store: ProfileStore) -> None:
    """sum-dtype answered with its declared misconception (as the tutoring service records a verdict),
    transpose-strides right."""
    store.record(Attempt("01", "transpose-strides", "prediction", True,
                         verdict={"y.stride()": {"correct": True, "divergence": "", "misconception": ""}}))
    store.record(Attempt("01", "sum-dtype", "prediction", False, answers={"s.dtype": "float32"},
                         verdict={"s.dtype": {"correct": False, "divergence": "", "misconception": "sums become floats"},
                                  "s.item()": {"correct": True, "divergence": "", "misconception": ""}}))


def test_stats_command_shows_the_weakest_mechanism_its_misconception_and_drills(tagged_course, capsys):
    store = ProfileStore.open(profile_path("learner"), course="mini-course")
    _record_history(store)
    store.close()
    assert main(["--lessons", str(tagged_course), "--profile", "learner", "stats"]) == 0
    out = capsys.readouterr().out
    section = out[out.index("Weakest mechanisms"):]
    assert section.index("dtype: about") < section.index("strides: about")  # the misconception made dtype weakest
    assert "still holding: sums become floats" in section
    # the other drill on the mechanism first, then the one that revealed it
    assert "would test it: 02 " in section and section.index("02 ") < section.index("01 ")


def test_plain_mode_lists_the_weakest_mechanisms_beside_the_modules(tmp_path, tagged_course, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite", course="mini-course")
    _record_history(store)
    session = Session(load_course(tagged_course), store)
    assert session.weak_spots() == [("01", "sum-dtype")]  # 02 is locked until 01 is done: not offered
    out = io.StringIO()
    assert run_plain(session, "default", io.StringIO(":quit\n"), out, scripted_sandbox) == 0
    text = out.getvalue()
    assert "Weakest mechanisms" in text and "still holding: sums become floats" in text
    assert text.index("Modules:") < text.index("Weakest mechanisms") < text.index("Module to open")


def test_no_history_shows_no_weakest_mechanism(tagged_course, capsys):
    assert main(["--lessons", str(tagged_course), "--profile", "fresh", "stats"]) == 0
    assert "Weakest mechanisms: none yet" in capsys.readouterr().out
