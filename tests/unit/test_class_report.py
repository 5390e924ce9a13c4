"""class-report over exported profiles: what an instructor reads, and what a bad file gets."""

from __future__ import annotations

import io
import json
import os
import pwd
import sqlite3

import pytest

from tutor.classroom import class_report
from tutor.classroom.report import build
from tutor.progress.store import Attempt, ProfileStore
from tutor.progress.transfer import export_profile


def prediction(item, answer, correct, confidence=None, seconds=30.0, module="01", key="y.stride()"):
    return Attempt(module=module, item=item, kind="prediction", correct=correct, answers={key: answer},
                   observed={}, verdict={}, seconds=seconds, confidence=confidence)


def export(tmp_path, name, attempts, course="mini-course"):
    store = ProfileStore.open(tmp_path / f"{name}.sqlite")
    store.use_course(course)
    try:
        for attempt in attempts:
            store.record(attempt)
        path = tmp_path / f"{name}.json"
        export_profile(store, path)
    finally:
        store.close()
    return path


@pytest.fixture
def class_files(tmp_path):
    alice = export(tmp_path, "alice", [
        prediction("transpose-strides", "(3, 1)", False, confidence=3),  # a listed wrong answer
        prediction("transpose-strides", "(1, 3)", True, confidence=3),
        prediction("sum-dtype", "float32", False, key="s.dtype"),
    ])
    bob = export(tmp_path, "bob", [
        prediction("transpose-strides", "3x1", False, confidence=2),  # the same answer, written otherwise
        prediction("transpose-strides", "(1, 3)", True, confidence=3, seconds=1e9),  # an abandoned tab
    ])
    return alice, bob


def test_per_module_and_per_learner(mini_course, class_files):
    report = build(mini_course, list(class_files))
    first = next(m for m in report.modules if m.id == "01")
    assert (first.started, first.finished) == (2, 0)
    assert first.missed[0] == ("What a transpose does to strides", 2)  # both missed it once; shown by its title
    assert ("a transpose copies the data", 2) in first.misconceptions  # matched through the judge, not the file
    assert first.certainty.said == 3 and first.certainty.right == 2
    alice, bob = report.learners
    assert alice.name == "alice" and alice.first_try == 0.0 and alice.drills_done == 1
    assert bob.seconds <= 3600 + 30  # one attempt's time is capped


def test_another_courses_history_is_left_out(mini_course, tmp_path):
    other = export(tmp_path, "carol", [prediction("transpose-strides", "(3, 1)", False)], course="pytorch-tutor")
    report = build(mini_course, [other])
    assert report.learners[0].attempts == 0
    assert next(m for m in report.modules if m.id == "01").started == 0


def test_terminal_table(mini_course, class_files, capsys):
    assert class_report(list(class_files), mini_course.root, None) == 0
    out = capsys.readouterr().out
    assert "Per module" in out and "Per learner" in out
    assert "a transpose copies the data" in out and "alice" in out and "bob" in out
    assert out.index("Per learner") < out.index("Per module")  # who needs help comes first
    assert max(len(line) for line in out.splitlines()) <= 120


def test_html_report_with_charts(mini_course, class_files, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "report.html"
    assert class_report(list(class_files), mini_course.root, target, io.StringIO(), io.StringIO()) == 0
    page = target.read_text()
    assert page.count("<svg") == 3 and "Per learner" in page and "What a transpose does to strides" in page
    assert page.index("Per learner") < page.index("Per module") and "max-width:100%" in page


@pytest.mark.parametrize("content, reason", [
    ("{not json", "is not a profile export"),
    (json.dumps({"format": "something else"}), "is not a pytorch-tutor profile export"),
    (json.dumps({"format": "pytorch-tutor-profile", "version": 99}), "newer pytorch-tutor"),
    (json.dumps({"format": "pytorch-tutor-profile", "version": 1, "attempts": {"a": 1}}), "not a list"),
    (json.dumps({"format": "pytorch-tutor-profile", "version": 1, "attempts": [{"module": "01"}]}), "malformed"),
    ("[" * 100000 + "]" * 100000, "is not a profile export"),
])
def test_a_bad_file_is_named_and_the_others_are_reported(mini_course, class_files, tmp_path, content, reason):
    bad = tmp_path / "mallory.json"
    bad.write_text(content)
    out, err = io.StringIO(), io.StringIO()
    assert class_report([*class_files, bad], mini_course.root, None, out, err) == 1
    assert "mallory.json" in err.getvalue() and reason in err.getvalue()
    assert "Traceback" not in err.getvalue() and "alice" in out.getvalue()


def test_hostile_text_never_reaches_the_terminal(mini_course, tmp_path):
    path = tmp_path / "eve\x1b]0;pwned\x07.json"
    path.write_text(json.dumps({"format": "pytorch-tutor-profile", "version": 1, "attempts": [
        {"module": "01", "item": "transpose-strides\x1b[2J", "kind": "prediction", "correct": False,
         "answers": {"y.stride()": "\x1b[31m(3, 1)"}, "verdict": {"misconception": "\x1b[2Jlies"},
         "seconds": "NaN", "at": "2026-01-01T00:00:00\x1b[5m"}]}))
    out, err = io.StringIO(), io.StringIO()
    class_report([path], mini_course.root, None, out, err)
    assert "\x1b" not in out.getvalue() + err.getvalue() and "lies" not in out.getvalue()


def test_nothing_readable_is_an_error(mini_course, tmp_path):
    err = io.StringIO()
    assert class_report([tmp_path / "missing.json"], mini_course.root, None, io.StringIO(), err) == 2
    assert "does not exist" in err.getvalue()


def test_learners_are_named_by_the_name_their_export_carries(mini_course, tmp_path):
    """Thirty files all called me.json collided; `profile export --name` puts the learner's name in the file,
    read as one printable line (a control character or a second line never reaches the report)."""
    from tutor.cli import main

    paths = []
    for who, name in (("a", "Alice Martin"), ("b", "Bob\x1b[2J\nEvil")):
        folder = tmp_path / who
        folder.mkdir()
        store = ProfileStore.open(folder / "p.sqlite")
        store.use_course("mini-course")
        store.record(prediction("transpose-strides", "(1, 3)", True))
        store.close()
        paths.append(folder / "me.json")
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("PYTORCH_TUTOR_HOME", str(folder / "home"))
            assert main(["--profile", "p", "profile", "export", str(paths[-1]), "--name", name]) == 0
    unnamed = export(tmp_path, "me", [prediction("transpose-strides", "(1, 3)", True)])
    report = build(mini_course, [*paths, unnamed])
    names = [r.name for r in report.learners]
    assert names[0] == "Alice Martin" and names[2] == "me"
    assert "\x1b" not in names[1] and "\n" not in names[1] and names[1].startswith("Bob")


def test_profiles_themselves_are_read_without_exports_and_never_written(mini_course, class_files, tmp_path):
    # what an instructor has on JupyterHub: each learner's profile in their home, not an export
    alice_db, bob_db = tmp_path / "alice.sqlite", tmp_path / "bob.sqlite"
    before = {p: p.read_bytes() for p in (alice_db, bob_db)}
    files = set(tmp_path.iterdir())
    from_exports = build(mini_course, list(class_files))
    from_profiles = build(mini_course, [alice_db, bob_db])
    assert [r.name for r in from_profiles.learners] == ["alice", "bob"]
    assert [(r.drills_done, r.attempts, r.first_try) for r in from_profiles.learners] == \
        [(r.drills_done, r.attempts, r.first_try) for r in from_exports.learners]
    assert [(m.started, m.missed, m.misconceptions) for m in from_profiles.modules] == \
        [(m.started, m.missed, m.misconceptions) for m in from_exports.modules]
    assert {p: p.read_bytes() for p in (alice_db, bob_db)} == before and set(tmp_path.iterdir()) == files


def test_a_default_profile_is_named_by_the_account_that_owns_it(mini_course, tmp_path):
    home = tmp_path / "home" / "profiles"
    home.mkdir(parents=True)
    store = ProfileStore.open(home / "default.sqlite")
    store.use_course("mini-course")
    store.record(prediction("transpose-strides", "(1, 3)", True))
    store.close()
    report = build(mini_course, [home / "default.sqlite"])
    try:
        owner = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # an account without a passwd entry (CI's fresh uid): then the file's name
        owner = "default"
    assert report.learners[0].name == owner


def test_default_profiles_in_learners_homes_are_named_by_the_home(mini_course, tmp_path):
    """On a hub whose servers all run as one account (DockerSpawner's jovyan), the owner names nobody apart."""
    files = []
    for name in ("ana", "ben"):
        home = tmp_path / "homes" / name / ".local" / "share" / "pytorch-tutor" / "profiles"
        home.mkdir(parents=True)
        store = ProfileStore.open(home / "default.sqlite")
        store.use_course("mini-course")
        store.record(prediction("transpose-strides", "(1, 3)", name == "ana"))
        store.close()
        files.append(home / "default.sqlite")
    report = build(mini_course, files)
    assert [r.name for r in report.learners] == ["ana", "ben"]
    assert [r.drills_done for r in report.learners] == [1, 0]


@pytest.mark.parametrize("rows, reason", [
    ("INSERT INTO attempts (at, module, item, kind, answers, observed, verdict, correct) "
     "VALUES ('t', '01', 'x', 'prediction', 'not json', '{}', '{}', 1)", "alice.sqlite"),
    ("INSERT INTO attempts (at, module, item, kind, answers, observed, verdict, correct) "
     "VALUES ('t', '01', 'x', 'sudo', '{}', '{}', '{}', 1)", "unknown kind"),
    ("DROP TABLE attempts", "not a pytorch-tutor profile"),
])
def test_a_tampered_profile_is_left_out_with_the_reason(mini_course, class_files, tmp_path, rows, reason):
    db = sqlite3.connect(tmp_path / "alice.sqlite")
    db.execute(rows)
    db.commit()
    db.close()
    report = build(mini_course, [tmp_path / "alice.sqlite", tmp_path / "bob.sqlite"])
    assert [r.name for r in report.learners] == ["bob"]
    assert len(report.refused) == 1 and reason in report.refused[0], report.refused


def test_a_profile_behind_a_link_is_refused_and_nothing_beside_it_is_opened(mini_course, class_files, tmp_path):
    # a learner owns their directory; the report may run as root: no link is followed, no -shm or
    # -wal beside the file is opened or made
    link = tmp_path / "mallory.sqlite"
    link.symlink_to(tmp_path / "alice.sqlite")
    (tmp_path / "bob.sqlite-shm").symlink_to(tmp_path / "target")
    (tmp_path / "bob.sqlite-wal").symlink_to(tmp_path / "target")
    report = build(mini_course, [link, tmp_path / "bob.sqlite"])
    assert [r.name for r in report.learners] == ["bob"] and "a link" in report.refused[0]
    assert not (tmp_path / "target").exists()
