"""The weakest mechanisms, the misconceptions still held and the drills that would test them, shown by
`stats` (the real command line), plain mode's module list and the app's stats screen."""

from __future__ import annotations

import io

from tests.mastery_history import record_history, tagged_course  # noqa: F401 (a fixture)
from tutor.cli import main
from tutor.course.loader import load_course
from tutor.locations import profile_path
from tutor.plain.plain_tutor import run_plain
from tutor.progress.store import Attempt, ProfileStore
from tutor.session import Session


def test_stats_command_shows_the_weakest_mechanism_its_misconception_and_drills(tagged_course, capsys):
    store = ProfileStore.open(profile_path("learner"), course="mini-course")
    record_history(store)
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
    record_history(store)
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


def test_plain_mode_weak_opens_a_weak_spot_drill(tmp_path, tagged_course, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite", course="mini-course")
    record_history(store)
    out = io.StringIO()
    session = Session(load_course(tagged_course), store)
    assert run_plain(session, "default", io.StringIO("weak\n:quit\n"), out, scripted_sandbox) == 0
    text = out.getvalue()
    assert "Type 'weak' to practise your weak spots" in text
    assert "What dtype does summing an int tensor give?" in text[text.index("Module to open"):]


def test_plain_mode_weak_without_weak_spots_says_so(tmp_path, tagged_course, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite", course="mini-course")
    out = io.StringIO()
    session = Session(load_course(tagged_course), store)
    assert run_plain(session, "default", io.StringIO("weak\n:quit\n"), out, scripted_sandbox) == 0
    assert "No weak spots to practise" in out.getvalue()
