"""The profile: attempts recorded, progress derived, damage survived."""

from __future__ import annotations

import sqlite3

import pytest

from tutor.progress.store import Attempt, ProfileError, ProfileStore
from tutor.progress.summary import summarise
from tutor.course.graph import Status


def attempt(module, item, kind="prediction", correct=True):
    return Attempt(module=module, item=item, kind=kind, correct=correct, answers={"a": "1"})


def test_attempts_round_trip_and_position(tmp_path):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    store.record(attempt("01", "d1", correct=False))
    store.set_position("01", "d1")
    store.close()
    store = ProfileStore.open(tmp_path / "p.sqlite")
    (saved,) = store.attempts()
    assert (saved.module, saved.item, saved.kind, saved.correct, saved.answers) == ("01", "d1", "prediction",
                                                                                   False, {"a": "1"})
    assert saved.at
    assert store.position() == ("01", "d1")
    assert store.notice == ""


def test_module_done_needs_every_drill_and_self_check(tmp_path, mini_course):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    for drill in ("transpose-strides", "sum-dtype"):
        store.record(attempt("01", drill, correct=False))
        store.record(attempt("01", drill))
    progress = summarise(mini_course, store.attempts())
    assert progress.of("01").drills_done == {"transpose-strides", "sum-dtype"}
    assert progress.of("01").first_try == set()
    assert "01" not in progress.done and progress.states["01"].status == Status.IN_PROGRESS
    store.record(attempt("01", "why-strides", kind="self_check", correct=False))
    store.record(attempt("01", "which-copies", kind="self_check"))
    progress = summarise(mini_course, store.attempts())
    assert "01" in progress.done
    assert progress.states["02"].status == Status.OPEN


def test_repair_drill_needs_the_repair_too(tmp_path, mini_course):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    store.record(attempt("02", "keepdim-bug"))
    assert "keepdim-bug" not in summarise(mini_course, store.attempts()).of("02").drills_done
    store.record(attempt("02", "keepdim-bug", kind="repair"))
    assert "keepdim-bug" in summarise(mini_course, store.attempts()).of("02").drills_done


def test_a_damaged_profile_is_moved_aside_not_lost(tmp_path):
    path = tmp_path / "p.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    other = tmp_path / "other.sqlite"
    ProfileStore.open(other).record(attempt("01", "d1"))
    store = ProfileStore.open(path)
    assert "moved aside" in store.notice
    aside = list(tmp_path.glob("p.damaged-*.sqlite"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not a database")
    store.record(attempt("01", "d1"))
    assert len(store.attempts()) == 1
    assert len(ProfileStore.open(other).attempts()) == 1  # nothing else touched


def test_foreign_sqlite_file_is_moved_aside(tmp_path):
    path = tmp_path / "p.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE attempts (x TEXT)")
    db.commit()
    db.close()
    store = ProfileStore.open(path)
    assert "moved aside" in store.notice


def test_profile_from_a_newer_tutor_is_refused_not_clobbered(tmp_path):
    path = tmp_path / "p.sqlite"
    store = ProfileStore.open(path)
    store._db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    store._db.commit()
    store.close()
    with pytest.raises(ProfileError, match="newer pytorch-tutor"):
        ProfileStore.open(path)
    assert path.exists()


def test_unknown_attempt_kind_is_refused(tmp_path):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    with pytest.raises(ValueError):
        store.record(attempt("01", "d1", kind="guess"))


def test_a_renamed_drill_keeps_its_progress_cards_drafts_and_position(tmp_path, mini_course_dir):
    """A module's `renamed: {old: new}` moves a learner's rows of the old id to the new one when a session opens
    the course: the drill stays verified, its review card and its typed answers follow, nothing is dropped."""
    import shutil

    from tutor.course.loader import load_course
    from tutor.session import Session

    root = tmp_path / "course"
    shutil.copytree(mini_course_dir, root)
    first = root / "01_first.yaml"
    text = first.read_text()
    assert "id: sum-dtype" in text
    first.write_text(text.replace("id: sum-dtype", "id: sum-dtype-promotion").replace(
        "\ndrills:\n", "\nrenamed:\n  sum-dtype: sum-dtype-promotion\n\ndrills:\n", 1))
    course = load_course(root)
    assert not course.all_errors(), course.all_errors()
    store = ProfileStore.open(tmp_path / "p.sqlite", course.identity)
    for drill in ("transpose-strides", "sum-dtype"):
        store.record(attempt("01", drill))
    store.save_card("01", "sum-dtype", "drill", "{}")
    store.save_drafts("01", "sum-dtype", {"y.dtype": "torch.int64"})
    store.set_position("01", "sum-dtype")
    session = Session(course, store)
    assert session.progress.of("01").drills_done == {"transpose-strides", "sum-dtype-promotion"}
    assert [c[1] for c in store.cards()] == ["sum-dtype-promotion"]
    assert store.drafts("01", "sum-dtype-promotion") == {"y.dtype": "torch.int64"}
    assert store.drafts("01", "sum-dtype") == {}
    assert store.position() == ("01", "sum-dtype-promotion")
    assert store.apply_renames(course.renames()) == 0  # nothing left to move: the next opening changes nothing


@pytest.mark.parametrize("renamed, says", [
    ("{sum-dtype: nowhere}", "'nowhere' is no drill or self-check of this module"),
    ("{transpose-strides: sum-dtype}", "'transpose-strides' is still an item of this module"),
    ("[a, b]", "expected a mapping of old id: new id"),
])
def test_a_bad_rename_is_an_error_at_its_line(tmp_path, mini_course_dir, renamed, says):
    import shutil

    from tutor.course.loader import load_course

    root = tmp_path / "course"
    shutil.copytree(mini_course_dir, root)
    first = root / "01_first.yaml"
    first.write_text(first.read_text().replace("\ndrills:\n", f"\nrenamed: {renamed}\n\ndrills:\n", 1))
    errors = load_course(root).all_errors()
    assert any(says in e.message and e.field.startswith("renamed") for e in errors), errors
