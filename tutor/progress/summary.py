"""Progress derived from the attempt history: what is done, started, answered."""

from __future__ import annotations

from dataclasses import dataclass, field

from tutor.course.graph import ModuleState, honest_tested_out, module_states
from tutor.course.loader import Course
from tutor.course.schema import Module
from tutor.progress.store import Attempt, AttemptKind


@dataclass
class ModuleProgress:
    drills_done: set[str] = field(default_factory=set)
    predicted: set[str] = field(default_factory=set)  # drills whose predictions were eventually right
    repaired: set[str] = field(default_factory=set)  # repair drills fixed and exercises solved
    first_try: set[str] = field(default_factory=set)  # right on the first attempt
    self_checks_answered: set[str] = field(default_factory=set)
    attempted: set[str] = field(default_factory=set)  # drills with at least one prediction
    tested_out: bool = False  # passed a placement set covering this module
    worked_on: bool = False  # an attempt other than a placement: the learner started it
    attempts: int = 0
    last_at: str = ""


@dataclass
class CourseProgress:
    modules: dict[str, ModuleProgress]
    done: set[str]  # every drill and self-check finished: never given for a placement
    started: set[str]
    states: dict[str, ModuleState]
    tested_out: set[str] = field(default_factory=set)  # skipped by a placement and not finished since

    def of(self, module_id: str) -> ModuleProgress:
        return self.modules.get(module_id) or ModuleProgress()


def drill_done(module: Module, progress: ModuleProgress, drill_id: str) -> bool:
    drill = module.drill(drill_id)
    if drill is None:
        return False
    if drill.is_exercise:
        return drill_id in progress.repaired
    return drill_id in progress.predicted and (not drill.is_repair or drill_id in progress.repaired)


def summarise(course: Course, attempts: list[Attempt], position: tuple[str, str] | None = None) -> CourseProgress:
    modules: dict[str, ModuleProgress] = {}
    seen_drills: set[tuple[str, str]] = set()
    for a in attempts:
        p = modules.setdefault(a.module, ModuleProgress())
        p.attempts += 1
        p.last_at = max(p.last_at, a.at)
        if a.kind == AttemptKind.PREDICTION:
            if (a.module, a.item) not in seen_drills and a.correct:
                p.first_try.add(a.item)
            seen_drills.add((a.module, a.item))
            p.attempted.add(a.item)
            if a.correct:
                p.predicted.add(a.item)
        elif a.kind in (AttemptKind.REPAIR, AttemptKind.EXERCISE) and a.correct:
            p.repaired.add(a.item)
        elif a.kind == AttemptKind.SELF_CHECK:
            p.self_checks_answered.add(a.item)
        elif a.kind == AttemptKind.PLACEMENT and a.correct:
            p.tested_out = True
        if a.kind not in (AttemptKind.PLACEMENT, AttemptKind.INTERVIEW):  # neither starts a module
            p.worked_on = True

    done: set[str] = set()
    tested_out: set[str] = set()
    for module in course.modules():
        p = modules.get(module.id)
        if p is None:
            continue
        p.drills_done = {d.id for d in module.drills if drill_done(module, p, d.id)}
        all_drills = len(p.drills_done) == len(module.drills)
        all_checks = {c.id for c in module.self_checks} <= p.self_checks_answered
        if all_drills and all_checks:
            done.add(module.id)
        elif p.tested_out:
            tested_out.add(module.id)
    started = {m for m, p in modules.items() if p.worked_on}
    if position:
        started.add(position[0])
    tested_out = honest_tested_out(course, done, tested_out)  # none behind an unmet prerequisite
    return CourseProgress(modules, done, started, module_states(course, done, started, tested_out), tested_out)
