"""What an interview may ask, and the rule that picks the next question.

The pool: a scope's prediction drills (asked on a fresh instance where they vary), its first-divergence
drills as triage ("where does it first go wrong?"), its repair drills as a short repair, and its
self-checks (multiple choice, and free text rated against the model answer's rubric). Labs are too long
for an interview and are left out.

The rule (``Selector``), an interviewer's staircase: every question has a level from 1 to 3, where it
sits among its module's questions of its kind (first third, middle third, last third: a module's later
drills build on its earlier ones). The interview starts at level 2; a right answer moves the next
question one level up, a wrong one one level down. The next question is of the next kind in the mix
(``MIX``), at the level nearest the current one, from a module other than the last one asked while any
is left, and among equals from the module asked least so far.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

from tutor.course.loader import Course
from tutor.course.schema import Drill, Module, SelfCheck

LENGTHS = (15, 30, 45)  # minutes
START_LEVEL, LOWEST, HIGHEST = 2, 1, 3
DONE_SCOPE = "done"


class QuestionKind(StrEnum):
    PREDICT = "predict"  # predict what PyTorch does (a fresh instance of a drill with variants)
    TRIAGE = "triage"  # name where a run first goes wrong (a first-divergence drill)
    REPAIR = "repair"  # repair seeded code under time (a repair drill)
    CHOICE = "choice"  # a multiple-choice self-check
    EXPLAIN = "explain"  # a free-text self-check, rated against its model answer


# soft limits: the answer still counts after them; the time is recorded and the debrief says so
LIMIT_SECONDS = {QuestionKind.PREDICT: 120, QuestionKind.TRIAGE: 180, QuestionKind.REPAIR: 300,
                 QuestionKind.CHOICE: 60, QuestionKind.EXPLAIN: 180}
KIND_WORDS = {QuestionKind.PREDICT: "predict the behaviour", QuestionKind.TRIAGE: "where does it first go wrong?",
              QuestionKind.REPAIR: "a short repair", QuestionKind.CHOICE: "multiple choice",
              QuestionKind.EXPLAIN: "explain, as you would to an interviewer"}
# the order an interviewer mixes kinds in; a kind the scope lacks is passed over
MIX = (QuestionKind.PREDICT, QuestionKind.TRIAGE, QuestionKind.EXPLAIN, QuestionKind.PREDICT,
       QuestionKind.REPAIR, QuestionKind.CHOICE)


@dataclass(frozen=True)
class Scope:
    key: str  # "done", or a course part's id
    title: str
    modules: tuple[str, ...]


@dataclass(frozen=True)
class Candidate:
    module: str
    kind: QuestionKind
    level: int
    drill: Drill | None = None
    check: SelfCheck | None = None

    @property
    def item(self) -> str:
        return self.drill.id if self.drill is not None else self.check.id

    @property
    def key(self) -> tuple[str, str]:
        return (self.module, self.item)


def scopes(course: Course, done: set[str]) -> list[Scope]:
    """The scopes on offer: the modules done or tested out, then each part of the course with written modules."""
    written = [slot for slot in course.slots if slot.module is not None]
    out = [Scope(DONE_SCOPE, "the modules you have done or tested out",
                 tuple(slot.id for slot in written if slot.id in done))]
    for part in course.parts:
        modules = tuple(slot.id for slot in written if slot.part == part.id)
        if modules:
            out.append(Scope(part.id, f"the part '{part.title}'", modules))
    return out


def find_scope(course: Course, done: set[str], key: str) -> Scope:
    """The scope named ``key``; ValueError names the ones there are."""
    offered = scopes(course, done)
    for scope in offered:
        if scope.key == key:
            return scope
    raise ValueError(f"there is no interview scope {key!r}: choose one of {', '.join(s.key for s in offered)}")


def _kind(drill: Drill) -> QuestionKind | None:
    if drill.is_exercise:
        return None  # a lab is longer than an interview question
    if drill.is_first_divergence:
        return QuestionKind.TRIAGE
    if drill.is_repair:
        return QuestionKind.REPAIR
    return QuestionKind.PREDICT if drill.asks else None


def _levelled(module_id: str, items: list, kind: QuestionKind, make) -> list[Candidate]:
    n = len(items)
    return [make(module_id, kind, LOWEST + (3 * i) // n, item) for i, item in enumerate(items)]


def candidates(modules: list[Module]) -> list[Candidate]:
    """Every question the scope's ``modules`` can give, each with its level (see the module docstring)."""
    out: list[Candidate] = []
    for module in modules:
        for kind in (QuestionKind.PREDICT, QuestionKind.TRIAGE, QuestionKind.REPAIR):
            drills = [d for d in module.drills if _kind(d) is kind]
            out += _levelled(module.id, drills, kind, lambda m, k, lvl, d: Candidate(m, k, lvl, drill=d))
        for kind, checks in ((QuestionKind.CHOICE, [c for c in module.self_checks if c.is_choice]),
                             (QuestionKind.EXPLAIN, [c for c in module.self_checks if not c.is_choice])):
            out += _levelled(module.id, checks, kind, lambda m, k, lvl, c: Candidate(m, k, lvl, check=c))
    return out


class Selector:
    """The staircase over a pool (see the module docstring); ``rng`` breaks ties only."""

    def __init__(self, pool: list[Candidate], rng: random.Random):
        self.pool = list(pool)
        self.rng = rng
        self.level = START_LEVEL
        self.turn = 0  # the position in MIX
        self.asked: set[tuple[str, str]] = set()
        self.per_module: dict[str, int] = {}
        self.last_module: str | None = None

    def next(self) -> Candidate | None:
        """The next question, or None when the pool is spent."""
        for offset in range(len(MIX)):
            kind = MIX[(self.turn + offset) % len(MIX)]
            options = [c for c in self.pool if c.kind is kind and c.key not in self.asked]
            if options:
                self.turn += offset + 1
                break
        else:
            return None
        elsewhere = any(c.module != self.last_module for c in options)
        ties = {id(c): self.rng.random() for c in options}
        chosen = min(options, key=lambda c: (elsewhere and c.module == self.last_module, abs(c.level - self.level),
                                             self.per_module.get(c.module, 0), ties[id(c)]))
        self.asked.add(chosen.key)
        self.per_module[chosen.module] = self.per_module.get(chosen.module, 0) + 1
        self.last_module = chosen.module
        return chosen

    def answered(self, correct: bool) -> None:
        """A right answer: the next question one level harder; a wrong one: one level easier."""
        self.level = min(HIGHEST, self.level + 1) if correct else max(LOWEST, self.level - 1)
