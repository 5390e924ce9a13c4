"""Spaced review (with an injected clock), statistics, and profile export/import."""

from __future__ import annotations

import json
import sqlite3
from datetime import date, datetime, timedelta, timezone

import pytest

from tutor.progress.stats import compute, spark
from tutor.progress.store import Attempt, ProfileStore
from tutor.progress.transfer import export_profile, import_profile
from tutor.progress.review import LEARNING_STEP, SELF_RATINGS, Rating, ReviewQueue, rating_for
from tutor.session import Session
from tutor.tutoring.service import TutoringService

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


class Clock:
    def __init__(self):
        self.now = START

    def __call__(self):
        return self.now

    def advance(self, **kwargs):
        self.now += timedelta(**kwargs)


def test_rating_from_outcome_confidence_and_time():
    assert rating_for(False, 3, 5) == Rating.Again
    assert rating_for(True, 1, 5) == Rating.Hard
    assert rating_for(True, 2, 200) == Rating.Hard
    assert rating_for(True, 2, 20) == Rating.Good
    assert rating_for(True, None, 20) == Rating.Good
    assert rating_for(True, 3, 10) == Rating.Easy


def test_schedule_grows_with_good_reviews(tmp_path):
    clock = Clock()
    queue = ReviewQueue(ProfileStore.open(tmp_path / "p.sqlite"), clock)
    card = queue.review("01", "d1", "drill", Rating.Again)
    assert card.due == START + LEARNING_STEP  # later the same day, not while the answer is on screen
    assert queue.due() == []
    clock.advance(hours=4, minutes=1)
    assert [d.item for d in queue.due()] == ["d1"]
    intervals = []
    for _ in range(4):
        clock.now = queue.card("01", "d1").due
        card = queue.review("01", "d1", "drill", Rating.Good)
        intervals.append(card.due - clock.now)
    assert intervals == sorted(intervals) and intervals[-1] > timedelta(days=3)


def test_got_it_is_not_due_again_within_minutes_or_hours(tmp_path):
    """A self-check answered "got it" (Good) graduates at once: FSRS's 1- and 10-minute learning steps are for
    flash cards drilled in one sitting; here the lesson was the learning (issue 12 item 18)."""
    clock = Clock()
    queue = ReviewQueue(ProfileStore.open(tmp_path / "p.sqlite"), clock)
    card = queue.review("01", "why-strides", "self_check", SELF_RATINGS[3])
    assert card.due - START >= timedelta(days=1)
    clock.advance(hours=12)
    assert queue.due() == []


async def test_session_creates_cards_for_misses_and_rates_only_when_due(tmp_path, mini_course):
    clock = Clock()
    store = ProfileStore.open(tmp_path / "p.sqlite")
    session = Session(mini_course, store, clock=clock)
    service = TutoringService(session, sandbox=None)  # a self-check runs nothing
    check = mini_course.slot("01").module.self_checks[1]  # multiple choice
    await service.answer_self_check("01", check, "a", 10.0)
    first = session.review.card("01", check.id)
    assert first is not None and first.last_review == START
    clock.advance(seconds=5)
    await service.answer_self_check("01", check, "b", 10.0)  # a retry before it is due: not a review
    assert session.review.card("01", check.id).last_review == START
    clock.advance(days=2)
    await service.answer_self_check("01", check, "b", 10.0, confidence=3)
    assert session.review.card("01", check.id).last_review == START + timedelta(days=2, seconds=5)


def test_stats_accuracy_calibration_and_days(tmp_path, mini_course):
    today = date(2026, 3, 10)
    at = lambda d: datetime(2026, 3, d, 12, tzinfo=timezone.utc).isoformat()
    attempts = [
        Attempt("01", "transpose-strides", "prediction", False, at=at(9), confidence=3, seconds=30),
        Attempt("01", "transpose-strides", "prediction", True, at=at(9), confidence=3, seconds=10),
        Attempt("01", "sum-dtype", "prediction", True, at=at(10), confidence=1, seconds=20),
        Attempt("01", "why-strides", "self_check", False, at=at(10), seconds=40),
    ]
    stats = compute(mini_course, attempts, today=today)
    module = stats.modules["01"]
    assert (module.drills, module.first_try, module.attempts) == (2, 1, 4)
    assert module.accuracy == 0.5 and module.seconds == 100
    assert stats.calibration == {1: (1, 1), 3: (2, 1)}
    assert stats.brier == pytest.approx(((1 / 3 - 1) ** 2 + (0.95 - 0) ** 2 + (0.95 - 1) ** 2) / 3)
    assert stats.daily[-1] == 2 and stats.daily[-2] == 2 and sum(stats.daily) == 4
    assert stats.recent == [False, True, True]
    assert spark([0, 1, 2, 4]) == "▁▃▅█"


def test_export_and_import_merge_two_machines(tmp_path):
    laptop = ProfileStore.open(tmp_path / "laptop.sqlite")
    desktop = ProfileStore.open(tmp_path / "desktop.sqlite")
    shared = Attempt("01", "d1", "prediction", True, answers={"a": "1"}, at="2026-03-01T10:00:00+00:00")
    laptop.record(shared)
    desktop.record(shared)
    laptop.record(Attempt("01", "d2", "prediction", False, at="2026-03-02T10:00:00+00:00", confidence=2))
    desktop.record(Attempt("02", "d9", "prediction", True, at="2026-03-03T10:00:00+00:00"))
    ReviewQueue(laptop, lambda: START).review("01", "d2", "drill", Rating.Again)
    laptop.set_position_at("01", "d2", "2026-03-02T10:00:00+00:00")
    desktop.set_position_at("02", "d9", "2026-03-03T10:00:00+00:00")

    export = tmp_path / "laptop.json"
    assert export_profile(laptop, export).attempts == 2
    assert json.loads(export.read_text())["format"] == "pytorch-tutor-profile"
    first, again = import_profile(desktop, export), import_profile(desktop, export)
    assert (first.added, first.present) == (1, 1)
    assert (again.added, again.present) == (0, 2)  # importing twice adds nothing
    items = sorted((a.module, a.item) for a in desktop.attempts())
    assert items == [("01", "d1"), ("01", "d2"), ("02", "d9")]
    assert next(a for a in desktop.attempts() if a.item == "d2").confidence == 2
    assert ReviewQueue(desktop).card("01", "d2") is not None
    assert desktop.position() == ("02", "d9")  # the later position wins


@pytest.mark.parametrize("content,message", [
    ("not json", "not a profile export"),
    ('{"format": "something else"}', "not a pytorch-tutor profile"),
    ('{"format": "pytorch-tutor-profile", "version": 99}', "newer pytorch-tutor"),
    ('{"format": "pytorch-tutor-profile", "version": 1, "attempts": [{"module": "01"}]}', "attempt 0 is malformed"),
])
def test_import_refuses_bad_files_and_writes_nothing(tmp_path, content, message):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(ValueError, match=message):
        import_profile(store, bad)
    assert store.attempts() == []


def test_version_1_profile_is_migrated(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE attempts (id INTEGER PRIMARY KEY, at TEXT NOT NULL, module TEXT NOT NULL, item TEXT NOT NULL,
            kind TEXT NOT NULL, answers TEXT NOT NULL, observed TEXT NOT NULL, verdict TEXT NOT NULL,
            correct INTEGER NOT NULL, seconds REAL NOT NULL DEFAULT 0);
        INSERT INTO attempts (at, module, item, kind, answers, observed, verdict, correct)
            VALUES ('2026-01-01T00:00:00+00:00', '01', 'd1', 'prediction', '{}', '{}', '{}', 1);
    """)
    db.commit()
    db.close()
    store = ProfileStore.open(path)
    assert store.notice == ""
    (attempt,) = store.attempts()
    assert attempt.item == "d1" and attempt.confidence is None
    store.record(Attempt("01", "d2", "prediction", True, confidence=2))
    assert store.attempts()[-1].confidence == 2
