"""Hostile profile exports through `pytorch-tutor profile import`: a clear message, status 1, the profile unchanged.

The whole file is validated before anything is written (depth, types, finite numbers, counts,
sizes), and the import is one transaction: a file that fails anywhere, or a write that fails
midway, leaves nothing of it behind.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from tutor.cli import main
from tutor.locations import profile_path
from tutor.progress import transfer
from tutor.progress.review import ReviewQueue
from tutor.progress.store import BUILTIN_COURSE_ID, ProfileStore


def attempt(i: int, **changes) -> dict:
    row = {"course": BUILTIN_COURSE_ID, "module": "01", "item": f"drill-{i}", "kind": "prediction", "correct": True,
           "answers": {"shape": "(2, 3)"}, "observed": {}, "verdict": {}, "seconds": 3.0,
           "at": f"2026-01-0{1 + i % 9}T10:00:00+00:00"}
    return {**row, **changes}


def export(path, attempts=(), cards=(), positions=()) -> None:
    path.write_text(json.dumps({"format": "pytorch-tutor-profile", "version": 3, "attempts": list(attempts),
                                "cards": list(cards), "positions": list(positions), "workspace": []}))


def profile_rows() -> tuple[list, list]:
    store = ProfileStore.open(profile_path("default"))
    try:
        return [(a.item, a.at, a.seconds) for a in store.attempts()], list(store.cards())
    finally:
        store.close()


@pytest.fixture
def profile(tmp_path, capsys):
    """A profile holding one earlier attempt; what it holds before the hostile import."""
    first = tmp_path / "first.json"
    export(first, [attempt(0)])
    assert main(["profile", "import", str(first)]) == 0
    capsys.readouterr()
    rows = profile_rows()
    assert [item for item, _, _ in rows[0]] == ["drill-0"]
    return rows


def refused(path, capsys) -> str:
    status = main(["profile", "import", str(path)])
    err = capsys.readouterr().err
    assert status == 1 and "Traceback" not in err, err
    return err


DEEP = 50_000


@pytest.mark.parametrize(("rows", "cards", "says"), [
    ([attempt(1), attempt(2, seconds=float("nan"))], [], "attempt 1 is malformed: 'seconds' is not a finite, non-negative number"),
    ([attempt(1), attempt(2, seconds=float("inf"))], [], "attempt 1 is malformed: 'seconds'"),
    ([attempt(1), attempt(2, seconds=-4)], [], "attempt 1 is malformed: 'seconds'"),
    ([attempt(1), attempt(2, observed={"v": [1.0, float("nan")]})], [], "not finite"),
    ([attempt(1, answers={"a": json.loads("[" * 500 + "]" * 500)})], [], "nested more than 16 deep"),
    ([attempt(1, module=["01"])], [], "'module' is not text"),
    ([attempt(1)], [{"course": BUILTIN_COURSE_ID, "module": "01", "item": "x", "kind": "prediction",
                     "card": "[" * DEEP + "]" * DEEP}], "card 0 is longer than a review card"),
    ([attempt(1)], [{"course": BUILTIN_COURSE_ID, "module": "01", "item": "x", "kind": "prediction",
                     "card": "[" * 100 + "]" * 100}], "card 0 cannot be read: 'card' is nested more than 16 deep"),
], ids=["nan-seconds", "inf-seconds", "negative-seconds", "nan-observed", "deep-answers", "module-not-text",
        "huge-card", "deep-card"])
def test_a_hostile_row_refuses_the_whole_file(tmp_path, capsys, profile, rows, cards, says):
    bad = tmp_path / "bad.json"
    export(bad, rows, cards)
    assert says in refused(bad, capsys)
    assert profile_rows() == profile  # the valid rows before the bad one were not kept either


def test_a_file_nested_past_pythons_stack_is_not_an_export(tmp_path, capsys, profile):
    bad = tmp_path / "deep.json"
    bad.write_text('{"format": "pytorch-tutor-profile", "version": 3, "attempts": ' + "[" * DEEP + "]" * DEEP + "}")
    assert "is not a profile export" in refused(bad, capsys)
    assert profile_rows() == profile


def test_a_file_past_the_size_budget_is_refused_unread(tmp_path, capsys, profile):
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(transfer.MAX_IMPORT_BYTES + 1)
    assert "larger than 64 MiB" in refused(big, capsys)
    assert profile_rows() == profile


def test_more_rows_than_a_profile_holds_are_refused(tmp_path, capsys, profile, monkeypatch):
    monkeypatch.setattr(transfer, "MAX_ATTEMPTS", 3)
    many = tmp_path / "many.json"
    export(many, [attempt(i) for i in range(1, 5)])
    assert "4 attempts: more than 3" in refused(many, capsys)
    assert profile_rows() == profile


def test_a_write_failing_midway_leaves_nothing_of_the_file(tmp_path, capsys, profile, monkeypatch):
    """Attempts are written before cards: a card's write failing rolls the attempts back too."""
    def full_disk(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    good = tmp_path / "good.json"
    card = {"course": BUILTIN_COURSE_ID, "module": "01", "item": "drill-1", "kind": "prediction",
            "card": json.dumps({"card_id": 1, "state": 1, "step": 0, "stability": None, "difficulty": None,
                                "due": "2026-01-02T10:00:00+00:00", "last_review": None})}
    export(good, [attempt(1), attempt(2)], [card])
    with monkeypatch.context() as patched:
        patched.setattr(ReviewQueue, "merge_card", full_disk)
        err = refused(good, capsys)
    assert "the profile could not be written, nothing of good.json was imported" in err and "disk is full" in err
    assert profile_rows() == profile
    assert main(["profile", "import", str(good)]) == 0  # the same file, once writes work, imports whole
    assert len(profile_rows()[0]) == 3


def test_a_workspace_file_that_cannot_be_placed_leaves_nothing_of_the_file(tmp_path, capsys, profile):
    # issue 28: the rows were committed first and the lab files written after, so a file failing
    # there left a half import (the rows in, some files written).
    from tutor.locations import workspace_dir

    course = f"courses/{BUILTIN_COURSE_ID}"
    export_with_files = tmp_path / "files.json"
    files = [{"path": f"{course}/01_labs/a.py", "text": "A = 1\n"},
             {"path": f"{course}/01_labs/b.py", "text": "B = 2\n"}]
    export(export_with_files, [attempt(1)])
    data = json.loads(export_with_files.read_text())
    data["workspace"] = files
    export_with_files.write_text(json.dumps(data))
    space = workspace_dir("default")
    (space / course / "01_labs" / "b.py").mkdir(parents=True)  # the second file's place is taken by a folder

    err = refused(export_with_files, capsys)
    assert "is not a plain file; nothing of the import was written" in err
    assert profile_rows() == profile  # no row ...
    assert sorted(p.name for p in (space / course / "01_labs").iterdir()) == ["b.py"]  # ... and no file, no temp

    (space / course / "01_labs" / "b.py").rmdir()
    assert main(["profile", "import", str(export_with_files)]) == 0  # the same file, once it can be placed: whole
    assert (space / course / "01_labs" / "b.py").read_text() == "B = 2\n" and len(profile_rows()[0]) == 2
