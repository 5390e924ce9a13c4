"""Per-mechanism knowledge estimate (Bayesian knowledge tracing per drill tag) and weak-spot practice.

Derived from the stored attempts on every read, like progress (``summary``): nothing is stored, so
the estimate never drifts from the history and needs no schema migration (replaying a few thousand
attempts takes milliseconds).

The model (Corbett & Anderson's BKT, one skill per tag): a learner either knows a mechanism or not.
Each judged attempt (a prediction, a repair run) on a drill carrying the tag is evidence:

- ``PRIOR`` 0.3: most learners arrive knowing some PyTorch, few know a given mechanism well enough to
  predict its observed output; a low prior lets two right answers establish it.
- ``LEARN`` 0.15: the chance that meeting a drill (its observation and explanation) teaches the
  mechanism; the course's drills each show one mechanism, so learning is quick but not certain.
- ``SLIP`` 0.1: a learner who knows the mechanism still mistypes or misreads a shape now and then.
- ``GUESS`` 0.2: most asks are free values (a shape, a dtype, a number) that are hard to hit by chance;
  yes/no and choice asks are easier, and 0.2 is between the two.
- ``MISCONCEPTION_SLIP`` 0.03: a wrong answer that is a declared misconception is the mistake the
  drill was written to catch, so a learner who knew the mechanism would rarely make it: it moves the
  estimate down much further than an unexplained wrong answer does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tutor.course.loader import Course
from tutor.progress.store import ATTEMPT_NOTE, Attempt, AttemptKind

PRIOR = 0.3
LEARN = 0.15
SLIP = 0.1
GUESS = 0.2
MISCONCEPTION_SLIP = 0.03
MASTERED = 0.95  # the usual BKT mastery threshold
WEAKEST = 3  # mechanisms the map and stats show
WEAK_SPOT_EVERY = 3  # in a practice run, one weak-spot drill after every this many new ones
JUDGED = (AttemptKind.PREDICTION, AttemptKind.REPAIR)
# an interview's answers on drills are judged as practice judges them (tutor/interview/run.py), so they are
# evidence too; its self-check answers are not drills and carry no mechanism tag
INTERVIEW_ON_DRILLS = frozenset({"predict", "triage", "repair"})
# Tags that name a drill's kind, not a mechanism (the course tags every repair drill "repair").
NOT_MECHANISMS = frozenset({"repair", "lab", "prediction", "experiment", "first-divergence", "exercise"})

DrillKey = tuple[str, str]  # (module id, drill id)


def update(known: float, correct: bool, misconception: bool = False) -> float:
    """The probability the mechanism is known after one judged attempt (evidence, then learning)."""
    slip = MISCONCEPTION_SLIP if misconception else SLIP
    if correct:
        evidence = known * (1 - slip)
        posterior = evidence / (evidence + (1 - known) * GUESS)
    else:
        evidence = known * slip
        posterior = evidence / (evidence + (1 - known) * (1 - GUESS))
    return posterior + (1 - posterior) * LEARN


def predicted_correct(known: float) -> float:
    """The chance the next attempt on the mechanism is right."""
    return known * (1 - SLIP) + (1 - known) * GUESS


@dataclass
class Mechanism:
    tag: str
    known: float = PRIOR
    attempts: int = 0
    # misconception text -> the drill that revealed it, while no later attempt on that drill was right
    held: dict[str, DrillKey] = field(default_factory=dict)
    drills: list[DrillKey] = field(default_factory=list)  # every drill of the course carrying the tag

    @property
    def mastered(self) -> bool:
        return self.known >= MASTERED

    def testing_drills(self, limit: int = 3) -> list[DrillKey]:
        """Drills that would test the held misconceptions: other drills on the mechanism first."""
        revealing = set(self.held.values())
        others = [d for d in self.drills if d not in revealing]
        return (others + [d for d in self.drills if d in revealing])[:limit]


def judged(attempt: Attempt) -> bool:
    """A judged attempt on a drill: a prediction, a repair run, or an interview's answer on a drill."""
    if attempt.kind in JUDGED:
        return True
    note = attempt.verdict.get(ATTEMPT_NOTE) if attempt.kind == AttemptKind.INTERVIEW else None
    return isinstance(note, dict) and note.get("as") in INTERVIEW_ON_DRILLS


def misconceptions_of(attempt: Attempt) -> list[str]:
    """The declared misconceptions a judged attempt's wrong answers matched (stored in its verdict)."""
    out = []
    for value in attempt.verdict.values():
        if isinstance(value, dict) and not value.get("correct") and isinstance(value.get("misconception"), str):
            if value["misconception"]:
                out.append(value["misconception"])
    return out


def _tags(course: Course) -> dict[DrillKey, tuple[str, ...]]:
    tags = {(m.id, d.id): tuple(t for t in d.tags if t not in NOT_MECHANISMS) for m in course.modules() for d in m.drills}
    return {key: found for key, found in tags.items() if found}


def estimate(course: Course, attempts: list[Attempt]) -> dict[str, Mechanism]:
    """Every tagged mechanism of the course, replayed over ``attempts`` (oldest first)."""
    tags, mechanisms = mechanisms_of(course)
    for a in attempts:
        key = (a.module, a.item)
        if not judged(a) or key not in tags:
            continue
        observe(mechanisms, tags[key], key, a.correct, misconceptions_of(a))
    return mechanisms


def mechanisms_of(course: Course) -> tuple[dict[DrillKey, tuple[str, ...]], dict[str, Mechanism]]:
    """Each tagged drill's mechanisms, and every mechanism at the prior (no attempt yet)."""
    tags = _tags(course)
    mechanisms: dict[str, Mechanism] = {}
    for key, drill_tags in tags.items():
        for tag in drill_tags:
            mechanisms.setdefault(tag, Mechanism(tag)).drills.append(key)
    return tags, mechanisms


def observe(mechanisms: dict[str, Mechanism], drill_tags: tuple[str, ...], key: DrillKey, correct: bool,
            revealed: list[str]) -> None:
    """One judged attempt on drill ``key`` (``revealed``: the misconceptions its wrong answers matched)."""
    for tag in drill_tags:
        mechanism = mechanisms[tag]
        mechanism.known = update(mechanism.known, correct, bool(revealed))
        mechanism.attempts += 1
        if correct:  # the drill that revealed a misconception, now right: no longer held
            mechanism.held = {text: where for text, where in mechanism.held.items() if where != key}
        for text in revealed:
            mechanism.held[text] = key


def weakest(mechanisms: dict[str, Mechanism], n: int = WEAKEST) -> list[Mechanism]:
    """The ``n`` least-known mechanisms the learner has met and not mastered (those holding a
    misconception first among equals)."""
    met = [m for m in mechanisms.values() if m.attempts and not m.mastered]
    return sorted(met, key=lambda m: (m.known, not m.held, m.tag))[:n]


def weak_spot_queue(mechanisms: dict[str, Mechanism], attempts: list[Attempt],
                    open_modules: set[str] | None = None) -> list[DrillKey]:
    """Drills to practise, weakest mechanism first: for a mechanism with a held misconception, the
    *other* drills carrying its tag (a fresh context, not the screen the learner just read), then the
    revealing drill itself; drills of modules not open to the learner are left out."""
    answered_right = {(a.module, a.item) for a in attempts if judged(a) and a.correct}
    queue: list[DrillKey] = []
    for mechanism in sorted(mechanisms.values(), key=lambda m: (m.known, m.tag)):
        if not mechanism.held or mechanism.mastered:
            continue
        revealing = set(mechanism.held.values())
        others = [d for d in mechanism.drills if d not in revealing and d not in answered_right]
        for key in others + sorted(revealing):
            if key not in queue and (open_modules is None or key[0] in open_modules):
                queue.append(key)
    return queue


def interleave(new: list[DrillKey], weak: list[DrillKey], every: int = WEAK_SPOT_EVERY) -> list[DrillKey]:
    """New work with weak-spot drills woven in: one after every ``every`` new items, never ahead of the
    first new item (practice does not block new work); left-over weak spots follow when new work runs out."""
    weak = [w for w in weak if w not in new]
    out: list[DrillKey] = []
    pending = list(weak)
    for i, item in enumerate(new, start=1):
        out.append(item)
        if i % every == 0 and pending:
            out.append(pending.pop(0))
    return out + pending
