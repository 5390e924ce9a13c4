"""Learning statistics from the attempt history: accuracy, calibration, time, recent days."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from tutor.course.loader import Course
from tutor.progress.mastery import Mechanism, estimate, weakest
from tutor.progress.store import ATTEMPT_NOTE, CONFIDENCE_LEVELS, Attempt, AttemptKind
from tutor.wording import count

# What each confidence level claims, as a probability of being right (for the Brier score).
CONFIDENCE_PROBABILITY = {1: 1 / 3, 2: 2 / 3, 3: 0.95}
DAYS = 14
# What the time figures count, said beside them: the clock runs from a drill's opening (or its last
# result) to each answer or submission, so reading and thinking count; runs and reading results do not.
THINKING_TIME = "from opening a drill, or its last result, to each answer you sent; runs not counted"
BRIER_GLOSS = ("the average squared gap between how sure you said you were (as a probability) and what "
               "happened (1 right, 0 wrong); lower is better")


@dataclass
class Tally:
    drills: int = 0  # drills predicted at least once
    first_try: int = 0  # of those, right on the first attempt
    attempts: int = 0
    seconds: float = 0.0

    @property
    def accuracy(self) -> float | None:
        return self.first_try / self.drills if self.drills else None


@dataclass
class Stats:
    modules: dict[str, Tally] = field(default_factory=dict)
    concepts: dict[str, Tally] = field(default_factory=dict)
    calibration: dict[int, tuple[int, int]] = field(default_factory=dict)  # level -> (answers, right)
    brier: float | None = None
    daily: list[int] = field(default_factory=list)  # attempts per day, oldest first, today last
    recent: list[bool] = field(default_factory=list)  # the last predictions, oldest first
    total_seconds: float = 0.0
    verified: int = 0  # drills whose prediction was verified
    verified_first_try: int = 0  # of those, on the first try (the rest after seeing a wrong try's observation)
    interview_answers: int = 0  # answers given in mock interviews (tutor/interview)
    interview_right: int = 0

    @property
    def first_try_share(self) -> float | None:
        return self.verified_first_try / self.verified if self.verified else None

    def first_try_line(self) -> str:
        """How honest "verified" is: without variants a retry may copy the observation it was shown."""
        if not self.verified:
            return "Verified drills: none yet."
        return (f"Verified drills: {self.verified}, {self.verified_first_try} on the first try "
                f"({self.first_try_share:.0%}); {self.verified - self.verified_first_try} after a wrong try "
                "showed the observation.")
    weakest: list[Mechanism] = field(default_factory=list)  # the least-known mechanisms (tutor/progress/mastery.py)

    def interview_line(self) -> str:
        """Interview accuracy beside practice's: the same learner under time, on fresh instances."""
        if not self.interview_answers:
            return "Interviews: none yet (`pytorch-tutor interview`, or i on the map)."
        practice = sum(t.first_try for t in self.modules.values())
        predicted = sum(t.drills for t in self.modules.values())
        beside = f"; practice: {practice / predicted:.0%} of drills right on the first try" if predicted else ""
        return (f"Interviews: {self.interview_right} of {count(self.interview_answers, 'answer')} right "
                f"({self.interview_right / self.interview_answers:.0%}){beside}.")

    def calibration_lines(self) -> list[str]:
        lines = []
        for level, word in CONFIDENCE_LEVELS.items():
            answers, right = self.calibration.get(level, (0, 0))
            if answers:
                lines.append(f"{word:<12} {count(answers, 'answer'):>12}, {right / answers:>4.0%} right "
                             f"(claimed about {CONFIDENCE_PROBABILITY[level]:.0%})")
        return lines


def _day(at: str) -> date | None:
    try:
        return datetime.fromisoformat(at).date()
    except ValueError:
        return None


def compute(course: Course, attempts: list[Attempt], today: date | None = None) -> Stats:
    today = today or date.today()
    tags = {(m.id, d.id): d.tags for m in course.modules() for d in m.drills}
    stats = Stats()
    modules: dict[str, Tally] = defaultdict(Tally)
    concepts: dict[str, Tally] = defaultdict(Tally)
    seen: set[tuple[str, str]] = set()
    calibration: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    squared_errors: list[float] = []
    verified: dict[tuple[str, str], bool] = {}  # drill -> its first right prediction was its first try
    per_day: dict[date, int] = defaultdict(int)
    for a in attempts:
        stats.total_seconds += a.seconds
        modules[a.module].attempts += 1
        modules[a.module].seconds += a.seconds
        if (day := _day(a.at)) is not None:
            per_day[day] += 1
        if a.kind == AttemptKind.INTERVIEW:
            stats.interview_answers += 1
            stats.interview_right += int(a.correct)
        if a.kind != AttemptKind.PREDICTION:
            continue
        stats.recent.append(a.correct)
        key = (a.module, a.item)
        groups = [modules[a.module]] + [concepts[t] for t in tags.get(key, ())]
        for tag in tags.get(key, ()):
            concepts[tag].attempts += 1
            concepts[tag].seconds += a.seconds
        if a.correct and key not in verified:  # recorded since issue 29; an older profile's order says the same
            verified[key] = bool((a.verdict.get(ATTEMPT_NOTE) or {}).get("first_try", key not in seen))
        if key not in seen:
            seen.add(key)
            for group in groups:
                group.drills += 1
                group.first_try += int(a.correct)
        if a.confidence in CONFIDENCE_PROBABILITY:
            calibration[a.confidence][0] += 1
            calibration[a.confidence][1] += int(a.correct)
            squared_errors.append((CONFIDENCE_PROBABILITY[a.confidence] - float(a.correct)) ** 2)
    stats.modules = dict(sorted(modules.items()))
    stats.concepts = dict(sorted(concepts.items()))
    stats.calibration = {level: (n, right) for level, (n, right) in sorted(calibration.items())}
    stats.brier = sum(squared_errors) / len(squared_errors) if squared_errors else None
    stats.daily = [per_day.get(today - timedelta(days=n), 0) for n in range(DAYS - 1, -1, -1)]
    stats.recent = stats.recent[-40:]
    stats.verified, stats.verified_first_try = len(verified), sum(verified.values())
    stats.weakest = weakest(estimate(course, attempts))
    return stats


# ---------------------------------------------------------------- weakest mechanisms (issue 29)

WEAKEST_GLOSS = "how likely you know each mechanism, from every judged attempt on drills tagged with it"


def weakest_lines(course: Course, mechanisms: list[Mechanism]) -> list[str]:
    """The weakest mechanisms as plain lines: the estimate, each misconception still held, and the
    drills that would test it (shared by `stats`, the stats screen, the map and plain mode)."""
    titles = {(m.id, d.id): d.title for m in course.modules() for d in m.drills}
    lines = []
    for mechanism in mechanisms:
        lines.append(f"{mechanism.tag}: about {mechanism.known:.0%} known ({count(mechanism.attempts, 'attempt')})")
        for text in sorted(mechanism.held):
            lines.append(f"  still holding: {' '.join(text.split())}")
        if mechanism.held:
            tests = ", ".join(f"{module} {' '.join(titles.get((module, drill), drill).split())}"
                              for module, drill in mechanism.testing_drills())
            lines.append(f"  would test it: {tests}")
    return lines


def spark(values: list[int]) -> str:
    """A one-line bar chart: ▁▂▃▄▅▆▇█ scaled to the largest value."""
    bars = "▁▂▃▄▅▆▇█"
    top = max(values, default=0)
    if top == 0:
        return bars[0] * len(values)
    return "".join(bars[min(len(bars) - 1, round(v / top * (len(bars) - 1)))] for v in values)


def history_line(recent: list[bool]) -> str:
    return "".join("●" if ok else "○" for ok in recent)


def format_duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min {int(seconds % 60)} s"
