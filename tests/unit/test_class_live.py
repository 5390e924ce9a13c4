"""`pytorch-tutor class watch`: who is stuck now, read from the learners' profiles as they work.

Profiles are written by the real store (as a learner's tutor writes them) with attempt times set
relative to a fixed "now", and read by the live view the way an instructor's terminal reads them.
"""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone

import pytest
from rich.console import Console

from tutor.classroom import class_watch
from tutor.classroom.live import class_now
from tutor.classroom.watch import view
from tutor.progress.store import Attempt, ProfileStore

NOW = datetime(2026, 12, 5, 14, 0, tzinfo=timezone.utc)


def at(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).isoformat(timespec="seconds")


def attempt(item, correct, minutes_ago, kind="prediction", answer="(3, 1)"):
    return Attempt(module="01", item=item, kind=kind, correct=correct, answers={"y.stride()": answer},
                   at=at(minutes_ago))


def profile(tmp_path, name, attempts):
    store = ProfileStore.open(tmp_path / f"{name}.sqlite")
    store.use_course("mini-course")
    store.record_many(attempts)
    store.close()
    return tmp_path / f"{name}.sqlite"


@pytest.fixture
def classroom(tmp_path):
    return [
        # three wrong runs at one drill, moments ago: stuck by the attempts rule
        profile(tmp_path, "ana", [attempt("sum-dtype", True, 30), attempt("transpose-strides", False, 4),
                                  attempt("transpose-strides", False, 3), attempt("transpose-strides", False, 1)]),
        # one wrong run, but at it for twelve minutes: stuck by the minutes rule
        profile(tmp_path, "ben", [attempt("transpose-strides", False, 12, answer="3x1")]),
        # right after two wrong runs: about to move on, not stuck
        profile(tmp_path, "cy", [attempt("transpose-strides", False, 5), attempt("transpose-strides", True, 2)]),
        # four wrong runs long ago, nothing since: idle, never flagged stuck
        profile(tmp_path, "dee", [attempt("transpose-strides", False, 50 + i) for i in range(4)]),
        # only a self-check: not at a drill
        profile(tmp_path, "eli", [Attempt(module="01", item="why-strides", kind="self_check", correct=False,
                                          at=at(1))]),
    ]


def test_the_rules_flag_who_is_stuck_and_why(mini_course, classroom):
    now = class_now(mini_course, classroom, NOW)
    rows = {r.name: r for r in now.learners}
    assert [r.name for r in now.stuck] == ["ben", "ana"]  # the longest stuck first
    assert (rows["ana"].attempts, rows["ana"].wrong, rows["ana"].why) == (3, 3, "3 wrong attempts")
    assert rows["ana"].minutes == pytest.approx(4)  # from when she came to this drill, not to the course
    assert rows["ben"].why == "12 minutes"
    assert rows["cy"].solved and not rows["cy"].stuck
    assert not rows["dee"].stuck and rows["dee"].idle_minutes == pytest.approx(50)
    assert rows["eli"].module == "" and not rows["eli"].stuck
    assert now.stuck_at == [("01 What a transpose does to strides", 2)]


def test_misconceptions_of_the_last_hour_are_counted_by_learner(mini_course, classroom):
    now = class_now(mini_course, classroom, NOW)
    # ana, ben ("3x1" is the same answer written otherwise), cy and dee (50-53 minutes ago), once each
    assert now.misconceptions == [("a transpose copies the data", 4)]
    later = class_now(mini_course, classroom, NOW + timedelta(minutes=50))
    assert later.misconceptions == [("a transpose copies the data", 2)]  # ana's and cy's are still recent


def test_the_view_says_each_state_and_the_rules(mini_course, classroom, tmp_path):
    (tmp_path / "broken.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    text = io.StringIO()
    Console(file=text, width=120).print(view(class_now(mini_course, classroom + [tmp_path / "broken.sqlite"], NOW),
                                             "Mini"))
    shown = text.getvalue()
    assert "STUCK (3 wrong attempts)" in shown and "STUCK (12 minutes)" in shown and "solved it" in shown
    assert "idle 50 min" in shown and "not started" in shown
    assert "left out: " in shown and "broken.sqlite" in shown
    assert "after 3 wrong attempts or 10 minutes" in shown


def test_class_watch_searches_a_directory_and_prints_once(mini_course_dir, classroom, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    assert class_watch([tmp_path], mini_course_dir, once=True, out=out, err=err) == 0
    assert all(name in out.getvalue() for name in ("ana", "ben", "cy", "dee", "eli")), out.getvalue()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert class_watch([empty], mini_course_dir, once=True, out=io.StringIO(), err=err) == 2
    assert "no profile could be read" in err.getvalue()


def test_the_hub_service_outside_a_hub_says_what_it_is_for(mini_course_dir, monkeypatch, capsys):
    """`class hub-service` is started by JupyterHub, which gives it its address and token; by hand it explains."""
    from tutor.cli import main

    for name in ("JUPYTERHUB_SERVICE_URL", "JUPYTERHUB_SERVICE_PREFIX", "JUPYTERHUB_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert main(["--lessons", str(mini_course_dir), "class", "hub-service", "/nowhere/*.sqlite"]) == 2
    said = capsys.readouterr().err
    assert "runs as a JupyterHub service" in said and "class watch" in said and "Traceback" not in said


def test_the_hub_service_reads_what_its_patterns_name_at_each_load(tmp_path):
    from tutor.classroom.hub_service import expand

    pattern = str(tmp_path / "*" / "profiles" / "default.sqlite")
    assert expand([pattern]) == []
    for name in ("ben", "ana"):
        (tmp_path / name / "profiles").mkdir(parents=True)
        (tmp_path / name / "profiles" / "default.sqlite").write_bytes(b"")
    assert [p.parts[-3] for p in expand([pattern])] == ["ana", "ben"]  # a learner who came later is there


def test_without_a_home_the_tutor_says_so_and_the_hub_service_still_starts(mini_course_dir, monkeypatch, capsys):
    """A JupyterHub service runs with no HOME; CI's learner uid has no passwd entry: platformdirs then
    raises. The instructor's service needs no data directory; a command that does says what to set."""
    import pwd

    from tutor.cli import main
    from tutor.locations import HOME_ENV

    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.delenv(HOME_ENV, raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("PYTORCH_TUTOR_CACHE", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: (_ for _ in ()).throw(KeyError(uid)))
    for name in ("JUPYTERHUB_SERVICE_URL", "JUPYTERHUB_SERVICE_PREFIX", "JUPYTERHUB_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    # gets as far as asking for the hub's environment (the course loaded, no data directory touched)
    assert main(["--lessons", str(mini_course_dir), "class", "hub-service", "/nowhere/*.sqlite"]) == 2
    assert "runs as a JupyterHub service" in capsys.readouterr().err
    assert main(["--lessons", str(mini_course_dir), "progress"]) == 2
    said = capsys.readouterr().err
    assert f"set {HOME_ENV}" in said and "Traceback" not in said
