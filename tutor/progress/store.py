"""The profile store: one SQLite file per profile, append-only attempts.

Progress is never stored, only derived from attempts (see ``summary``), so it
cannot drift from the history. A damaged file is moved aside, never deleted,
and a fresh profile starts: the learner loses nothing that could be saved.

One profile holds several courses: attempts, review cards and the resume position
belong to a course identity (``course.yaml``'s ``id:``), and a store reads and
writes one course at a time (``use_course``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import StrEnum
from pathlib import Path
from typing import Any

from tutor.locations import PRIVATE_FILE

SCHEMA_VERSION = 4
# Rows written before courses had ids are the built-in course's (lessons/course.yaml says so).
BUILTIN_COURSE_ID = "pytorch-tutor"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY,
    course TEXT NOT NULL DEFAULT 'pytorch-tutor',
    at TEXT NOT NULL,
    module TEXT NOT NULL,
    item TEXT NOT NULL,
    kind TEXT NOT NULL,
    answers TEXT NOT NULL,
    observed TEXT NOT NULL,
    verdict TEXT NOT NULL,
    correct INTEGER NOT NULL,
    seconds REAL NOT NULL DEFAULT 0,
    confidence INTEGER
);
CREATE INDEX IF NOT EXISTS attempts_by_item ON attempts (module, item);
-- position.key is the course id
CREATE TABLE IF NOT EXISTS position (key TEXT PRIMARY KEY, module TEXT NOT NULL, item TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cards (
    course TEXT NOT NULL DEFAULT 'pytorch-tutor',
    module TEXT NOT NULL,
    item TEXT NOT NULL,
    kind TEXT NOT NULL,
    card TEXT NOT NULL,
    PRIMARY KEY (course, module, item)
);
-- what the learner typed in an item and has not had verified yet (tutor/tutoring/drafts.py); a table that
-- older tutors of schema 4 simply do not read, so adding it needs no new schema version
CREATE TABLE IF NOT EXISTS drafts (
    course TEXT NOT NULL,
    module TEXT NOT NULL,
    item TEXT NOT NULL,
    field TEXT NOT NULL,
    text TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (course, module, item, field)
);
"""
_AFTER_MIGRATIONS = "CREATE INDEX IF NOT EXISTS attempts_by_course ON attempts (course, module, item)"

class AttemptKind(StrEnum):
    """What an attempt was; stored as its value, so a profile reads the same either way."""

    PREDICTION = "prediction"
    REPAIR = "repair"
    EXPERIMENT = "experiment"
    EXERCISE = "exercise"  # a lab
    SELF_CHECK = "self_check"
    REVIEW = "review"
    PLACEMENT = "placement"
    # an answer given in a mock interview (tutor/interview): feeds the learner model, never verifies a drill;
    # its note says which interview and what kind of question (a prediction, a repair, a self-check)
    INTERVIEW = "interview"


KINDS = tuple(AttemptKind)
# A prediction's verdict holds one entry per ask key, and this one about the attempt itself
# ({"first_try": bool, "review": bool}); "@" is never in an ask key
ATTEMPT_NOTE = "@attempt"
CONFIDENCE_LEVELS = {1: "guessing", 2: "fairly sure", 3: "certain"}

# Each step brings a profile of schema N-1 up to N, in place and in one transaction.
_MIGRATIONS = {
    2: ["ALTER TABLE attempts ADD COLUMN confidence INTEGER"],
    3: [],  # the cards table, created by the schema script
    # every row so far is the built-in course's; the cards' key gains the course
    4: ["ALTER TABLE attempts ADD COLUMN course TEXT NOT NULL DEFAULT 'pytorch-tutor'",
        "CREATE TABLE cards_v4 (course TEXT NOT NULL DEFAULT 'pytorch-tutor', module TEXT NOT NULL, "
        "item TEXT NOT NULL, kind TEXT NOT NULL, card TEXT NOT NULL, PRIMARY KEY (course, module, item))",
        "INSERT INTO cards_v4 (course, module, item, kind, card) SELECT 'pytorch-tutor', module, item, kind, card "
        "FROM cards",
        "DROP TABLE cards",
        "ALTER TABLE cards_v4 RENAME TO cards",
        "UPDATE position SET key = 'pytorch-tutor' WHERE key = 'last'"],
}


class ProfileError(Exception):
    """The profile cannot be used (for example, written by a newer tutor)."""


@dataclass
class Attempt:
    module: str
    item: str  # a drill id or a self-check id
    kind: str  # an AttemptKind
    correct: bool
    answers: dict[str, Any] = field(default_factory=dict)
    observed: dict[str, Any] = field(default_factory=dict)
    verdict: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    at: str = ""
    confidence: int | None = None  # 1..3, see CONFIDENCE_LEVELS
    course: str = ""  # the course identity; empty: the store's current course


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class ProfileStore:
    def __init__(self, connection: sqlite3.Connection, path: Path, notice: str = "",
                 course: str = BUILTIN_COURSE_ID):
        self._db = connection
        self.path = path
        self.notice = notice  # shown once to the learner, e.g. after a damaged file was moved aside
        self.course = course  # the course whose attempts, cards and position this store reads and writes
        self._batched = False  # inside transaction(): writes commit together at its end

    def use_course(self, course: str) -> None:
        """Read and write ``course``'s progress from now on (the profile keeps every course's)."""
        if not course:
            raise ValueError("a course identity is needed")
        self.course = course

    def apply_renames(self, renames: dict[tuple[str, str], str]) -> int:
        """Move this course's rows of each renamed item (module, old id) to its new id: attempts, review
        cards, drafts and the position. Run on every opening; a row already moved is not there to move
        again. Where both ids hold a card (or a draft field), the new id's stays. Returns the rows moved."""
        moved = 0
        with self._writing():
            for (module, old), new in renames.items():
                key = (self.course, module, old)
                moved += self._db.execute("UPDATE attempts SET item = ? WHERE course = ? AND module = ? AND item = ?",
                                          (new, *key)).rowcount
                for table in ("cards", "drafts"):
                    moved += self._db.execute(f"UPDATE OR IGNORE {table} SET item = ? "  # noqa: S608 - fixed names
                                              "WHERE course = ? AND module = ? AND item = ?", (new, *key)).rowcount
                    self._db.execute(f"DELETE FROM {table} WHERE course = ? AND module = ? AND item = ?", key)  # noqa: S608
                moved += self._db.execute("UPDATE position SET item = ? WHERE key = ? AND module = ? AND item = ?",
                                          (new, *key)).rowcount
        return moved

    def courses(self) -> list[str]:
        """Every course this profile holds progress for."""
        rows = self._db.execute("SELECT course FROM attempts UNION SELECT course FROM cards "
                                "UNION SELECT key FROM position ORDER BY 1").fetchall()
        return [r[0] for r in rows]

    @classmethod
    def open(cls, path: Path, course: str = BUILTIN_COURSE_ID) -> "ProfileStore":
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return cls(_connect(path), path, course=course)
        except sqlite3.DatabaseError as exc:
            aside = path.with_name(f"{path.stem}.damaged-{time.strftime('%Y%m%d-%H%M%S')}{path.suffix}")
            path.rename(aside)
            for suffix in ("-wal", "-shm", "-journal"):
                leftover = path.with_name(path.name + suffix)
                if leftover.exists():
                    leftover.rename(aside.with_name(aside.name + suffix))
            notice = (f"Your profile file could not be read ({exc}). It was moved aside to {aside} "
                      "and a fresh profile was started; nothing was deleted.")
            return cls(_connect(path), path, notice, course)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Every write inside is one transaction: all of them are kept, or (on an exception) none."""
        if self._batched:
            yield
            return
        self._batched = True
        try:
            with self._db:
                yield
        finally:
            self._batched = False

    def _writing(self):
        """One write's transaction, or the enclosing ``transaction()``'s."""
        return nullcontext() if self._batched else self._db

    def record(self, attempt: Attempt) -> None:
        self.record_many([attempt])

    def record_many(self, attempts: Iterable[Attempt]) -> None:
        """Record ``attempts`` in one statement (one transaction unless inside ``transaction()``)."""
        rows = []
        for attempt in attempts:
            if attempt.kind not in KINDS:
                raise ValueError(f"unknown attempt kind {attempt.kind!r}")
            rows.append((attempt.course or self.course, attempt.at or _now(), attempt.module, attempt.item,
                         attempt.kind, json.dumps(attempt.answers), json.dumps(attempt.observed),
                         json.dumps(attempt.verdict), int(attempt.correct), float(attempt.seconds),
                         attempt.confidence))
        with self._writing():
            self._db.executemany(
                "INSERT INTO attempts (course, at, module, item, kind, answers, observed, verdict, correct, seconds, "
                "confidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def attempts(self, module: str | None = None) -> list[Attempt]:
        """The current course's attempts, oldest first (``module`` narrows them)."""
        query = ("SELECT module, item, kind, correct, answers, observed, verdict, seconds, at, confidence, course "
                 "FROM attempts WHERE course = ?")
        args: tuple = (self.course,)
        if module is not None:
            query += " AND module = ?"
            args += (module,)
        rows = self._db.execute(query + " ORDER BY id", args).fetchall()
        return [Attempt(m, i, k, bool(c), _json(a), _json(o), _json(v), s, at, conf, course)
                for m, i, k, c, a, o, v, s, at, conf, course in rows]

    def cards(self) -> list[tuple[str, str, str, str]]:
        """The current course's review cards as (module, item, kind, card JSON)."""
        return self._db.execute("SELECT module, item, kind, card FROM cards WHERE course = ? ORDER BY module, item",
                                (self.course,)).fetchall()

    def save_card(self, module: str, item: str, kind: str, card_json: str) -> None:
        with self._writing():
            self._db.execute("INSERT OR REPLACE INTO cards (course, module, item, kind, card) VALUES (?, ?, ?, ?, ?)",
                             (self.course, module, item, kind, card_json))

    def set_position(self, module: str, item: str) -> None:
        self.set_position_at(module, item, _now())

    def position(self) -> tuple[str, str] | None:
        row = self._db.execute("SELECT module, item FROM position WHERE key = ?", (self.course,)).fetchone()
        return (row[0], row[1]) if row else None

    def position_at(self) -> str:
        row = self._db.execute("SELECT at FROM position WHERE key = ?", (self.course,)).fetchone()
        return row[0] if row else ""

    def set_position_at(self, module: str, item: str, at: str) -> None:
        with self._writing():
            self._db.execute("INSERT OR REPLACE INTO position (key, module, item, at) VALUES (?, ?, ?, ?)",
                             (self.course, module, item, at))


    def drafts(self, module: str, item: str) -> dict[str, str]:
        """The current course's drafts of one item: field -> text."""
        rows = self._db.execute("SELECT field, text FROM drafts WHERE course = ? AND module = ? AND item = ?",
                                (self.course, module, item)).fetchall()
        return dict(rows)

    def save_drafts(self, module: str, item: str, fields: dict[str, str]) -> None:
        """Keep each field's text (an empty text forgets that field), in one transaction."""
        with self._db:
            for name, text in fields.items():
                if text:
                    self._db.execute("INSERT OR REPLACE INTO drafts (course, module, item, field, text, at) "
                                     "VALUES (?, ?, ?, ?, ?, ?)", (self.course, module, item, name, text, _now()))
                else:
                    self._db.execute("DELETE FROM drafts WHERE course = ? AND module = ? AND item = ? AND field = ?",
                                     (self.course, module, item, name))

    def setting(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_setting(self, key: str, value: str) -> None:
        with self._db:
            self._db.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                            "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))


def _json(text: str) -> dict:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _migrate(db: sqlite3.Connection, version: int) -> None:
    with db:
        for target in range(version + 1, SCHEMA_VERSION + 1):
            for statement in _MIGRATIONS[target]:
                db.execute(statement)
            db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(target),))


def _connect(path: Path) -> sqlite3.Connection:
    # Made 0600 before SQLite makes it (0644 less the umask); its -wal and -shm files take its mode.
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, PRIVATE_FILE))
    db = sqlite3.connect(path, timeout=5.0)
    try:
        if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
            raise sqlite3.DatabaseError("the database failed its integrity check")
        fresh = db.execute("SELECT name FROM sqlite_master WHERE name = 'attempts'").fetchone() is None
        db.executescript(_SCHEMA)
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            if not fresh:
                raise sqlite3.DatabaseError("the profile has no schema version")
            with db:
                db.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        elif not row[0].isdigit():
            raise sqlite3.DatabaseError("the profile's schema version is unreadable")
        elif int(row[0]) > SCHEMA_VERSION:
            db.close()
            raise ProfileError(f"{path} was written by a newer pytorch-tutor (profile schema {row[0]}); "
                               "update pytorch-tutor to use it")
        else:
            _migrate(db, int(row[0]))
        db.execute(_AFTER_MIGRATIONS)
        columns = {r[1] for r in db.execute("PRAGMA table_info(attempts)")}
        if not {"course", "module", "item", "kind", "correct"} <= columns:
            raise sqlite3.DatabaseError("the profile's tables are not the tutor's")
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db
