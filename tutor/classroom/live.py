"""Who is stuck now: a class's live state, read from the learners' profiles as they work.

``class-report`` answers "how did the class do"; this answers "who needs me now", so it reads
the profiles themselves (``sources.py``: read-only, untrusted, never an export to collect) and
is read again every few seconds. The rules, as an instructor is told them:

* a learner's **current drill** is the one of their latest attempt (a self-check, a review or
  an interview answer is not a drill they are working at, and counts for nothing here);
* the attempts **on it** are those since they came to it (their latest run of attempts at it,
  unbroken by another drill), and the **minutes on it** run from the first of those until now;
* **stuck**: not yet right on it, and at least ``WRONG_RUNS`` wrong attempts there, or at least
  ``STUCK_MINUTES`` minutes on it; **idle**: no attempt for ``IDLE_MINUTES`` (then never stuck:
  they may have gone for lunch);
* **misconceptions revealed in the last hour**: wrong predictions matched against the course's
  listed wrong answers (as ``class-report`` matches them), counted by learner.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tutor.classroom.report import drill_title, learner_names, misconception_of
from tutor.classroom.sources import read_learners
from tutor.course.loader import Course
from tutor.progress.store import Attempt, AttemptKind

WRONG_RUNS = 3
STUCK_MINUTES = 10.0
IDLE_MINUTES = 30.0
RECENT = timedelta(hours=1)
DRILL_KINDS = (AttemptKind.PREDICTION, AttemptKind.REPAIR, AttemptKind.EXPERIMENT, AttemptKind.EXERCISE)


@dataclass
class LearnerNow:
    name: str
    module: str = ""  # "" when the learner has not started
    drill: str = ""  # its title
    attempts: int = 0  # on the current drill
    wrong: int = 0
    minutes: float = 0.0
    solved: bool = False  # right on it (they are about to move on)
    idle_minutes: float = 0.0  # since their latest attempt
    stuck: bool = False
    why: str = ""  # the rule that made them stuck, in words


@dataclass
class ClassNow:
    at: datetime
    learners: list[LearnerNow]
    misconceptions: list[tuple[str, int]]  # revealed in the last hour: (text, learners)
    stuck_at: list[tuple[str, int]]  # per drill ("module drill title"), learners stuck there now
    refused: list[str] = field(default_factory=list)

    @property
    def stuck(self) -> list[LearnerNow]:
        return [learner for learner in self.learners if learner.stuck]


def _when(at: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(at)
    except (TypeError, ValueError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def learner_now(name: str, attempts: list[Attempt], course: Course, now: datetime) -> LearnerNow:
    """One learner's state at ``now`` by the rules above."""
    on_drills = [(a, when) for a in attempts if a.kind in DRILL_KINDS and (when := _when(a.at)) is not None]
    on_drills.sort(key=lambda pair: pair[1])
    row = LearnerNow(name)
    if not on_drills:
        return row
    latest, latest_at = on_drills[-1]
    streak = []
    for attempt, when in reversed(on_drills):
        if (attempt.module, attempt.item) != (latest.module, latest.item):
            break
        streak.append((attempt, when))
    row.module, row.drill = latest.module, drill_title(course, latest.module, latest.item)
    row.attempts = len(streak)
    row.wrong = sum(not a.correct for a, _ in streak)
    row.solved = any(a.correct for a, _ in streak)
    row.minutes = max(0.0, (now - streak[-1][1]).total_seconds() / 60)
    row.idle_minutes = max(0.0, (now - latest_at).total_seconds() / 60)
    if row.solved or row.idle_minutes >= IDLE_MINUTES:
        return row
    if row.wrong >= WRONG_RUNS:
        row.stuck, row.why = True, f"{row.wrong} wrong attempts"
    elif row.minutes >= STUCK_MINUTES:
        row.stuck, row.why = True, f"{row.minutes:.0f} minutes"
    return row


def class_now(course: Course, paths: list[Path], now: datetime | None = None) -> ClassNow:
    """The class at ``now`` (default: this moment) from each learner's profile (or export)."""
    now = now or datetime.now(timezone.utc)
    learners = []
    revealed: dict[str, set[str]] = defaultdict(set)
    read, refused = read_learners(paths, learner_names(paths))
    for name, attempts in read:
        attempts = [a for a in attempts if a.course in ("", course.id) and course.slot(a.module) is not None]
        learners.append(learner_now(name, attempts, course, now))
        for a in attempts:
            when = _when(a.at)
            if a.kind == AttemptKind.PREDICTION and not a.correct and when is not None and now - when <= RECENT:
                for key, answer in a.answers.items():
                    text = misconception_of(course, a, key, answer)
                    if text:
                        revealed[text].add(name)
    stuck_at = Counter(f"{r.module} {r.drill}" for r in learners if r.stuck)
    learners.sort(key=lambda r: (not r.stuck, -r.minutes if r.stuck else 0.0, r.name))
    return ClassNow(now, learners, sorted(((t, len(w)) for t, w in revealed.items()), key=lambda p: (-p[1], p[0])),
                    sorted(stuck_at.items(), key=lambda p: (-p[1], p[0])), refused)
