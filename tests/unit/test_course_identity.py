"""One profile, several courses, never mixed: progress belongs to a course identity (issue 12, items 1 and 24)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import datetime, timezone

import pytest
from fsrs import Rating

from tutor.cli import main
from tutor.course.loader import load_course
from tutor.locations import builtin_course_dir, profile_path, workspace_dir
from tutor.workspace import Workspace, ensure_starter, exercise_path
from tutor.progress.store import BUILTIN_COURSE_ID, Attempt, ProfileStore
from tutor.progress.review import ReviewQueue
from tutor.session import Session

START = datetime(2026, 3, 1, tzinfo=timezone.utc)


@pytest.fixture
def pack_dir(tmp_path, mini_course_dir):
    """The mini course under another identity: the same module and drill ids as the built-in one's."""
    pack = tmp_path / "pack"
    shutil.copytree(mini_course_dir, pack)
    text = (pack / "course.yaml").read_text().replace("id: mini-course", "id: other-pack")
    (pack / "course.yaml").write_text(text)
    return pack


def _work_in(course, store, module="01", item="transpose-strides"):
    session = Session(course, store, lambda: START)
    session.visit(module, item)
    store.record(Attempt(module, item, "prediction", False, answers={"y.stride()": "(3, 1)"}))
    session.review.review(module, item, "drill", Rating.Again)
    return session


def test_the_builtin_course_has_the_id_old_rows_belong_to():
    assert load_course(builtin_course_dir()).id == BUILTIN_COURSE_ID


def test_a_course_without_an_id_gets_one_from_its_directory_and_a_warning(tmp_path, mini_course_dir, capsys):
    # issue 33: packs written before `id:` was required validated then; they must keep validating.
    pack = tmp_path / "my_pack" / "lessons"
    shutil.copytree(mini_course_dir, pack)
    (pack / "course.yaml").write_text((pack / "course.yaml").read_text().replace("id: mini-course\n", ""))
    assert main(["validate", str(pack)]) == 0
    out = capsys.readouterr().out
    assert "course.yaml:1:1: warning: no `id:`" in out and "add `id: my_pack`" in out
    assert load_course(pack).identity == "my_pack"  # a generic directory name: its parent's
    other = tmp_path / "Tensor Puzzles!"
    shutil.copytree(pack, other)
    assert load_course(other).id == "Tensor-Puzzles"  # made a safe id


def test_two_courses_in_one_profile_do_not_mix(tmp_path, mini_course_dir, pack_dir):
    path = tmp_path / "p.sqlite"
    mini, pack = load_course(mini_course_dir), load_course(pack_dir)
    with_pack = ProfileStore.open(path)
    _work_in(pack, with_pack)
    with_pack.close()

    store = ProfileStore.open(path)
    session = Session(mini, store, lambda: START)
    assert session.store.attempts() == []
    assert session.state("01").status.value == "open"  # not "in progress" from the pack's attempt
    assert session.review.due(START) == []
    assert session.resume_point() is None
    store.close()

    store = ProfileStore.open(path)
    session = Session(pack, store, lambda: START)
    assert [a.item for a in session.store.attempts()] == ["transpose-strides"]
    assert session.state("01").status.value == "in progress"
    assert session.resume_point() == ("01", "transpose-strides")
    assert sorted(store.courses()) == ["other-pack"]


def test_progress_command_shows_only_its_course(pack_dir, capsys):
    store = ProfileStore.open(profile_path("learner"))
    _work_in(load_course(pack_dir), store)
    store.close()
    assert main(["--profile", "learner", "--lessons", str(pack_dir), "progress"]) == 0
    out = capsys.readouterr().out
    assert "in progress" in out and "last at module 01" in out
    assert main(["--profile", "learner", "progress"]) == 0
    out = capsys.readouterr().out
    assert "in progress" not in out and "last at module" not in out


def _v3_profile(path):
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '3');
        CREATE TABLE attempts (id INTEGER PRIMARY KEY, at TEXT NOT NULL, module TEXT NOT NULL, item TEXT NOT NULL,
            kind TEXT NOT NULL, answers TEXT NOT NULL, observed TEXT NOT NULL, verdict TEXT NOT NULL,
            correct INTEGER NOT NULL, seconds REAL NOT NULL DEFAULT 0, confidence INTEGER);
        INSERT INTO attempts (at, module, item, kind, answers, observed, verdict, correct)
            VALUES ('2026-01-01T00:00:00+00:00', '01', 'confirm-the-build', 'prediction', '{}', '{}', '{}', 0);
        CREATE TABLE position (key TEXT PRIMARY KEY, module TEXT NOT NULL, item TEXT NOT NULL, at TEXT NOT NULL);
        INSERT INTO position VALUES ('last', '01', 'confirm-the-build', '2026-01-01T00:00:00+00:00');
        CREATE TABLE cards (module TEXT NOT NULL, item TEXT NOT NULL, kind TEXT NOT NULL, card TEXT NOT NULL,
            PRIMARY KEY (module, item));
    """)
    db.commit()
    db.close()


def test_an_old_profile_becomes_the_builtin_courses(tmp_path, pack_dir):
    path = tmp_path / "old.sqlite"
    _v3_profile(path)
    store = ProfileStore.open(path)
    assert store.notice == ""
    ReviewQueue(store, lambda: START).review("01", "confirm-the-build", "drill", Rating.Again)
    builtin = Session(load_course(builtin_course_dir()), store, lambda: START)
    assert [a.item for a in builtin.store.attempts()] == ["confirm-the-build"]
    assert builtin.store.position() == ("01", "confirm-the-build")
    pack = Session(load_course(pack_dir), store, lambda: START)
    assert pack.store.attempts() == [] and pack.store.position() is None and pack.store.cards() == []
    store.close()


def test_a_corrupt_profile_is_kept_and_said_so(tmp_path):
    path = tmp_path / "p.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    store = ProfileStore.open(path)
    assert "could not be read" in store.notice and "nothing was deleted" in store.notice
    aside = list(tmp_path.glob("p.damaged-*.sqlite"))
    assert len(aside) == 1 and aside[0].read_bytes() == b"this is not a database" * 100
    store.close()


# ---------------------------------------------------------------- item 24: export and import carry the lab files


def test_export_and_import_carry_every_course_and_the_lab_workspace(tmp_path, pack_dir, monkeypatch, capsys):
    monkeypatch.setenv("PYTORCH_TUTOR_HOME", str(tmp_path / "laptop"))
    store = ProfileStore.open(profile_path("default"))
    _work_in(load_course(pack_dir), store)
    store.use_course(BUILTIN_COURSE_ID)
    store.record(Attempt("07", "micrograd", "exercise", True))
    store.close()
    builtin, pack = Workspace("default", BUILTIN_COURSE_ID), Workspace("default", "other-pack")
    (builtin.directory / "07_micrograd.py").write_text("class Value:\n    pass  # my engine\n")
    (pack.directory / "07_micrograd.py").write_text("# the other pack's lab of the same module and id\n")
    (builtin.directory / "support").mkdir()
    (builtin.directory / "support" / "helpers.py").write_text("X = 1\n")
    export = tmp_path / "moving.json"
    assert main(["profile", "export", str(export)]) == 0
    assert "3 lab workspace files" in capsys.readouterr().out

    monkeypatch.setenv("PYTORCH_TUTOR_HOME", str(tmp_path / "desktop"))
    assert main(["profile", "import", str(export)]) == 0
    assert "3 lab workspace files" in capsys.readouterr().out
    assert (builtin.directory / "07_micrograd.py").read_text() == "class Value:\n    pass  # my engine\n"
    assert (pack.directory / "07_micrograd.py").read_text() == "# the other pack's lab of the same module and id\n"
    assert (builtin.directory / "support" / "helpers.py").read_text() == "X = 1\n"
    store = ProfileStore.open(profile_path("default"))
    assert [a.item for a in store.attempts()] == ["micrograd"]
    store.use_course("other-pack")
    assert [a.item for a in store.attempts()] == ["transpose-strides"] and store.cards()
    assert store.position() == ("01", "transpose-strides")
    store.close()

    # a local file that differs is kept beside the imported one
    (builtin.directory / "07_micrograd.py").write_text("# started over here\n")
    assert main(["profile", "import", str(export)]) == 0
    assert "kept beside it" in capsys.readouterr().out
    kept = list(builtin.directory.glob("07_micrograd.before-import-*.py"))
    assert len(kept) == 1 and kept[0].read_text() == "# started over here\n"


class _Lab:
    def __init__(self, drill_id: str, starter: str):
        self.id, self.title, self.starter, self.files = drill_id, "t", starter, ()


def test_two_courses_with_a_lab_of_the_same_module_and_id_keep_apart_files():
    mine = ensure_starter(Workspace("default", BUILTIN_COURSE_ID), "07", _Lab("micrograd", "# built-in\n"))
    theirs = ensure_starter(Workspace("default", "other-pack"), "07", _Lab("micrograd", "# pack\n"))
    assert mine != theirs and mine.name == theirs.name
    assert "# built-in" in mine.read_text() and "# pack" in theirs.read_text()
    # a course known only by its directory gets a directory of its own too, never a path built from it
    odd = Workspace("default", "dir:/some/where/../odd course").directory
    assert odd.parent.name == "courses" and odd.name.startswith("dir-")


def test_a_workspace_from_before_courses_moves_under_the_builtin_course_and_loses_nothing():
    root = workspace_dir("default")
    (root / "07_micrograd.py").write_text("class Value:  # weeks of work\n")
    (root / "07_two_files").mkdir()
    (root / "07_two_files" / "layers.py").write_text("def linear(x, w): ...\n")
    (root / "1_eye.use-reference").write_text("")
    # a file of the same name already in the new place (a second tutor on this profile): both are kept
    builtin = root / "courses" / BUILTIN_COURSE_ID
    builtin.mkdir(parents=True)
    (builtin / "1_eye.use-reference").write_text("newer")
    space = Workspace("default", BUILTIN_COURSE_ID)
    assert space.directory == builtin
    assert sorted(p.name for p in root.iterdir()) == ["courses"]
    assert (builtin / "07_micrograd.py").read_text() == "class Value:  # weeks of work\n"
    assert (builtin / "07_two_files" / "layers.py").read_text() == "def linear(x, w): ...\n"
    assert (builtin / "1_eye.use-reference").read_text() == "newer"
    assert len(list(builtin.glob("1_eye.before-per-course-*"))) == 1
    # the lab's own functions find the moved file
    assert exercise_path(space, "07", _Lab("micrograd", "")).read_text().startswith("class Value")


def test_an_export_from_before_courses_imports_under_the_builtin_course(tmp_path, capsys):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": "pytorch-tutor-profile", "version": 2, "attempts": [],
                               "workspace": [{"path": "07_micrograd.py", "text": "class Value: ...\n"},
                                             {"path": "07_two_files/layers.py", "text": "L = 1\n"}]}))
    assert main(["profile", "import", str(old)]) == 0
    builtin = Workspace("default", BUILTIN_COURSE_ID).directory
    assert (builtin / "07_micrograd.py").read_text() == "class Value: ...\n"
    assert (builtin / "07_two_files" / "layers.py").read_text() == "L = 1\n"
    assert not (workspace_dir("default") / "07_micrograd.py").exists()
    # a current export names each file's course: one that does not is refused, and nothing is written
    stray = tmp_path / "stray.json"
    stray.write_text(json.dumps({"format": "pytorch-tutor-profile", "version": 3, "attempts": [],
                                 "workspace": [{"path": "07_x.py", "text": "x"}]}))
    assert main(["profile", "import", str(stray)]) == 1
    assert "not under a course" in capsys.readouterr().err


@pytest.mark.parametrize("path", ["../escape.py", "/etc/passwd", "a/../../b.py", "a\\b.py", ".hidden", "x\0.py",
                                  "a/b/c/d/e.py"])
def test_import_refuses_a_workspace_path_outside_and_writes_nothing(tmp_path, path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "pytorch-tutor-profile", "version": 2,
                               "attempts": [{"module": "01", "item": "d", "kind": "prediction", "correct": True,
                                             "at": "2026-01-01T00:00:00+00:00"}],
                               "workspace": [{"path": "fine.py", "text": "ok"}, {"path": path, "text": "x"}]}))
    assert main(["profile", "import", str(bad)]) == 1
    assert "workspace file" in capsys.readouterr().err
    assert not (workspace_dir("default") / "fine.py").exists()
    store = ProfileStore.open(profile_path("default"))
    assert store.attempts() == []
    store.close()


def test_import_refuses_an_oversized_workspace_file(tmp_path, capsys):
    from tutor.progress.workspace_files import MAX_FILE_BYTES

    bad = tmp_path / "big.json"
    bad.write_text(json.dumps({"format": "pytorch-tutor-profile", "version": 2,
                               "workspace": [{"path": "big.py", "text": "x" * (MAX_FILE_BYTES + 1)}]}))
    assert main(["profile", "import", str(bad)]) == 1
    assert "larger than the import allows" in capsys.readouterr().err
    assert not (workspace_dir("default") / "big.py").exists()


def test_an_imported_lab_file_is_not_the_learners_until_its_lab_is_opened(tmp_path, capsys):
    from tutor.course.schema import Stage
    from tutor.workspace import NOT_OPENED, YOURS, course_key, stage_whose

    shared = tmp_path / "shared.json"
    relative = f"courses/{course_key(BUILTIN_COURSE_ID)}/07_micrograd.py"
    shared.write_text(json.dumps({"format": "pytorch-tutor-profile", "version": 3, "attempts": [],
                                  "workspace": [{"path": relative, "text": "import os  # someone else's\n"}]}))
    assert main(["profile", "import", str(shared)]) == 0
    space, stage = Workspace("default", BUILTIN_COURSE_ID), Stage("micro", "07", "micrograd", "")
    assert stage_whose(space, stage) == NOT_OPENED
    # the mark is this machine's: an export does not carry it, and an import cannot bring or forge one
    again = tmp_path / "again.json"
    assert main(["profile", "export", str(again)]) == 0
    assert [f["path"] for f in json.loads(again.read_text())["workspace"]] == [relative]
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps({"format": "pytorch-tutor-profile", "version": 3, "attempts": [], "workspace": [
        {"path": f"courses/{course_key(BUILTIN_COURSE_ID)}/.imported/07_micrograd.py", "text": ""}]}))
    assert main(["profile", "import", str(forged)]) == 1
    capsys.readouterr()
    ensure_starter(space, "07", _Lab("micrograd", "# starter\n"))  # the learner opens the lab
    assert stage_whose(space, stage) == YOURS
    assert exercise_path(space, "07", _Lab("micrograd", "")).read_text() == "import os  # someone else's\n"
