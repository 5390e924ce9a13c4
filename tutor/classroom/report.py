"""A class report from learners' profiles: per module and per learner, for an instructor.

Input is the files learners made with ``pytorch-tutor profile export``, or their profiles
themselves (SQLite, read-only: ``sources.py``), and is untrusted: each file is size-capped and
validated attempt by attempt (the same reader as ``profile import``); a file that fails is
named with the reason and left out, the others are reported. Misconceptions are looked up in the course's own listed
wrong answers (the learner's answer re-parsed and matched by the judge), so no text from a
file is shown as a misconception.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tutor.classroom.sources import learner_name, read_learners
from tutor.course.loader import Course
from tutor.judge import AnswerError, matching_misconception, parse_answer
from tutor.progress.store import Attempt
from tutor.progress.summary import summarise
from tutor.safe_text import safe_line

TOP = 3  # drills and misconceptions listed per module
MAX_SECONDS_PER_ATTEMPT = 3600.0  # a learner who left the tab open is not an hour of study per run


@dataclass
class Certainty:
    said: int = 0  # predictions made "certain"
    right: int = 0

    @property
    def rate(self) -> float | None:
        return self.right / self.said if self.said else None

    def add(self, attempt: Attempt) -> None:
        if attempt.confidence == 3:
            self.said += 1
            self.right += int(attempt.correct)


@dataclass
class LearnerRow:
    name: str
    modules_done: int
    modules_started: int
    drills_done: int
    attempts: int
    seconds: float
    first_try: float | None  # share of attempted drills right on the first prediction
    certainty: Certainty
    last_at: str


@dataclass
class ModuleRow:
    id: str
    title: str
    started: int = 0  # learners
    finished: int = 0
    seconds: float = 0.0
    certainty: Certainty = field(default_factory=Certainty)
    missed: list[tuple[str, int]] = field(default_factory=list)  # (drill id, learners who got it wrong)
    misconceptions: list[tuple[str, int]] = field(default_factory=list)  # (misconception, learners)


@dataclass
class ClassReport:
    course_title: str
    learners: list[LearnerRow]
    modules: list[ModuleRow]
    refused: list[str]  # one line per file left out, with the reason


def _clean_seconds(value: float) -> float:
    return min(value, MAX_SECONDS_PER_ATTEMPT) if math.isfinite(value) and value > 0 else 0.0


def _one_line(text: str) -> str:
    """A name as one short printable line: control characters made inert, line breaks and runs of space one space."""
    return " ".join(safe_line(text, 60).split())[:60]


def learner_names(paths: list[Path]) -> list[str]:
    """Each learner by the name the file carries (``sources.learner_name``), else by file name, made
    unique (thirty files all called me.json, or two folders both holding alice.json)."""
    names, seen = [], Counter()
    for path in paths:
        base = _one_line(learner_name(path)) or _one_line(path.stem) or "learner"
        seen[base] += 1
        names.append(base if seen[base] == 1 else f"{base} ({seen[base]})")
    return names


def misconception_of(course: Course, attempt: Attempt, ask_key: str, answer: str) -> str:
    slot = course.slot(attempt.module)
    drill = slot.module.drill(attempt.item) if slot and slot.module else None
    if drill is None:
        return ""
    ask = next((a for a in drill.asks if a.key == ask_key), None)
    if ask is None or not isinstance(answer, str):
        return ""
    try:
        predicted = parse_answer(ask.kind, answer, ask.options)
    except AnswerError:
        return ""
    return matching_misconception(ask, predicted, drill.wrong_answers)


def build(course: Course, paths: list[Path]) -> ClassReport:
    modules = {slot.id: ModuleRow(slot.id, slot.title) for slot in course.slots if slot.module is not None}
    missed: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    revealed: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    learners = []
    read, refused = read_learners(paths, learner_names(paths))
    for name, attempts in read:
        # another course's history (a profile holds several) is not this one's
        attempts = [a for a in attempts if a.module in modules and a.course in ("", course.id)]
        renames = course.renames()  # an export made before a drill was renamed counts under its new id
        for a in attempts:
            a.seconds = _clean_seconds(a.seconds)
            a.item = renames.get((a.module, a.item), a.item)
        progress = summarise(course, attempts)
        certainty = Certainty()
        seconds = 0.0
        for a in attempts:
            row = modules[a.module]
            row.seconds += a.seconds
            seconds += a.seconds
            if a.kind != "prediction":
                continue
            certainty.add(a)
            row.certainty.add(a)
            if not a.correct:
                missed[a.module][a.item].add(name)
                for key, answer in a.answers.items():
                    text = misconception_of(course, a, key, answer)
                    if text:
                        revealed[a.module][text].add(name)
        for module_id in progress.started & modules.keys():
            modules[module_id].started += 1
        for module_id in progress.done & modules.keys():
            modules[module_id].finished += 1
        attempted = sum(len(p.attempted) for p in progress.modules.values())
        first = sum(len(p.first_try) for p in progress.modules.values())
        learners.append(LearnerRow(
            name=name, modules_done=len(progress.done), modules_started=len(progress.started & modules.keys()),
            drills_done=sum(len(p.drills_done) for p in progress.modules.values()),
            attempts=len(attempts), seconds=seconds, first_try=first / attempted if attempted else None,
            certainty=certainty, last_at=max((a.at for a in attempts), default="")[:16].replace("T", " ")))
    for module_id, row in modules.items():
        row.missed = _top({drill_title(course, module_id, drill): len(who) for drill, who in missed[module_id].items()})
        row.misconceptions = _top({text: len(who) for text, who in revealed[module_id].items()})
    return ClassReport(course.title, learners, list(modules.values()), refused)


def drill_title(course: Course, module_id: str, drill_id: str) -> str:
    """A drill as the instructor reads it: its title (its id when it has none of its own or is gone)."""
    slot = course.slot(module_id)
    drill = slot.module.drill(drill_id) if slot and slot.module else None
    return drill.title if drill is not None and drill.title != drill_id.replace("-", " ") else drill_id


def _top(counts: dict[str, int]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:TOP]
