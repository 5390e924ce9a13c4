"""``pytorch-tutor validate``: the schema, the graph and the giveaway check, without running anything.

Kept apart from ``check`` (``tutor.commands.authoring``) so that validating imports neither the
sandbox client nor the tutoring service: a warm ``validate`` of the course is mostly
reading the parsed-module cache.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, TextIO

from tutor.course.errors import LessonError
from tutor.course.giveaway import course_giveaways
from tutor.course.loader import Course, is_course_dir, load_course, load_module_file_in_course
from tutor.course.schema import Module
from tutor.wording import count


@dataclass
class Target:
    """What an author pointed a command at: a whole course or single module files."""

    label: str
    course: Course | None = None
    modules: list[Module] = field(default_factory=list)
    errors: list[LessonError] = field(default_factory=list)


def courses_inside(project: Path) -> list[Path]:
    """Course directories one level down (``PROJECT/PACKAGE``) or in ``PROJECT/src/PACKAGE``, no links followed."""
    found = []
    for parent in (project, project / "src"):
        if parent.is_symlink() or not parent.is_dir():
            continue
        for child in sorted(parent.iterdir()):
            if not child.is_symlink() and child.is_dir() and not child.name.startswith(".") and is_course_dir(child):
                found.append(child)
    return found


def load_targets(paths: Iterable[Path]) -> list[Target]:
    targets = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            if not is_course_dir(path):
                inside = courses_inside(path)
                if len(inside) != 1:
                    found = f" (several inside: {', '.join(str(p) for p in inside)}; name one)" if inside else ""
                    targets.append(Target(str(path), errors=[LessonError(str(path), 1, 1, "",
                                                                         "no course.yaml in this directory" + found)]))
                    continue
                path = inside[0]  # a pack's project directory (what `new course` made): the course in it
            course = load_course(path, str(path))
            targets.append(Target(str(path), course, course.modules(), course.all_errors()))
        elif path.is_file():  # with its course's helpers and chained stages when it belongs to one
            module, errors = load_module_file_in_course(path)
            targets.append(Target(str(path), None, [module] if module else [], errors))
        else:
            targets.append(Target(str(path), errors=[LessonError(str(path), 1, 1, "", "no such file or directory")]))
    return targets


def validate(paths: Iterable[Path], out: TextIO) -> int:
    started = time.perf_counter()
    targets = load_targets(paths)
    errors = [e for t in targets for e in t.errors]
    errors += unreadable_wrong_answers(m for t in targets for m in t.modules)
    for error in errors:
        print(error, file=out)
    for t in targets:
        for warning in t.course.warnings if t.course is not None else ():
            print(warning, file=out)
    warnings = course_giveaways(m for t in targets for m in t.modules)
    for warning in warnings:
        print(warning, file=out)
    thin = thinly_proved_labs(m for t in targets for m in t.modules)
    for warning in [*thin, *replaced_module_rules(m for t in targets for m in t.modules),
                    *undiagnosable_symptoms(m for t in targets for m in t.modules)]:
        print(warning, file=out)
    modules = sum(len(t.modules) for t in targets)
    drills = sum(len(m.drills) for t in targets for m in t.modules)
    checks = sum(len(m.self_checks) for t in targets for m in t.modules)
    for t in targets:
        if t.course is not None:
            coming = sum(1 for s in t.course.slots if s.is_coming)
            print(f"{t.label}: {len(t.course.slots)} modules in the course, {len(t.course.modules())} written, "
                  f"{coming} coming", file=out)
    elapsed = time.perf_counter() - started
    status = "ok" if not errors else count(len(errors), "error")
    status += f", {count(len(warnings), 'giveaway warning')}" if warnings else ""
    status += _thin_summary([m for t in targets for m in t.modules])
    print(f"validate: {status} — {count(modules, 'module')}, {count(drills, 'drill')}, {count(checks, 'self-check')} "
          f"in {elapsed:.2f} s", file=out)
    return 1 if errors else 0


MIN_WRONG_SUBMISSIONS = 2  # the rustlings/Exercism rule: a grader is worth what it is proved to reject


def thinly_proved_labs(modules: Iterable[Module]) -> list[str]:
    """A warning for each lab or repair that declares fewer than two wrong submissions.

    A warning, not an error: a pack written before the rule still validates (and format 1,
    which has no `wrong_submissions:`, is warned too: the remedy is format 2).
    """
    return [f"{module.file}:{drill.line}: warning: drill {drill.id!r}: a {drill.kind.value} with "
            f"{count(len(drill.wrong_submissions), 'wrong submission')}: declare at least {MIN_WRONG_SUBMISSIONS} "
            f"(`wrong_submissions:`), mistakes learners make, so that `check` proves the "
            f"{'tests reject' if drill.is_exercise else 'check rejects'} them"
            for module in modules for drill in module.drills
            if _proved_by_wrong_submissions(drill) and len(drill.wrong_submissions) < MIN_WRONG_SUBMISSIONS]


def replaced_module_rules(modules: Iterable[Module]) -> list[str]:
    """A warning for each lab whose own `rules:` drop some of its module's: a lab's rules replace the
    module's whole (as they always have), and an author who adds one rule to one lab rarely means to
    lift the module's `no_loops` from it."""
    out = []
    for module in modules:
        shared = module.rules.to_wire() if module.rules is not None else {}
        for drill in module.drills:
            if not shared or not drill.is_exercise or drill.rules is None or drill.rules is module.rules:
                continue
            dropped = sorted(k for k in shared if k not in drill.rules.to_wire())
            if dropped:
                out.append(f"{module.file}:{drill.line}: warning: drill {drill.id!r}: its own `rules:` replace the "
                           f"module's whole, so {', '.join(dropped)} no longer apply to it; repeat in its "
                           "`rules:` those it should keep")
    return out


def undiagnosable_symptoms(modules: Iterable[Module]) -> list[str]:
    """A warning for each symptoms-first repair without a choice ask: its diagnosis is naming the mechanism,
    and a choice among mechanisms is how a learner names one (a shape or a number alone is a symptom)."""
    return [f"{module.file}:{drill.line}: warning: drill {drill.id!r}: `symptoms_first` with no choice ask: "
            "ask for the mechanism as a `kind: choice` with `options:`, so the diagnosis names the cause"
            for module in modules for drill in module.drills
            if drill.symptoms_first and not any(ask.kind == "choice" for ask in drill.asks)]


def _proved_by_wrong_submissions(drill) -> bool:
    """Labs and repairs, a first-divergence drill's repair included (its contracts judge the repair)."""
    return drill.is_exercise or drill.is_repair


def _thin_summary(modules: list[Module]) -> str:
    """``1 lab, 3 repairs with fewer than 2 wrong submissions`` (empty when none)."""
    thin = [d for m in modules for d in m.drills
            if _proved_by_wrong_submissions(d) and len(d.wrong_submissions) < MIN_WRONG_SUBMISSIONS]
    labs = sum(1 for d in thin if d.is_exercise)
    parts = [count(n, what) for n, what in ((labs, "lab"), (len(thin) - labs, "repair")) if n]
    return f", {', '.join(parts)} with fewer than {MIN_WRONG_SUBMISSIONS} wrong submissions" if parts else ""


def unreadable_wrong_answers(modules: Iterable[Module]) -> list[str]:
    """A listed wrong answer the judge cannot read as its ask's kind: check would reject the drill;
    validate says so without running anything (remembered per module file, like the giveaways)."""
    from tutor.course import cache

    return [problem for module in modules
            for problem in cache.per_module("unreadable-wrong-answers", module, lambda: _unreadable(module), str)]


def _unreadable(module: Module) -> list[str]:
    from tutor.judge import AnswerError, parse_answer

    problems = []
    for drill in module.drills:
        asks = {a.key: a for a in drill.asks}
        for wrong in drill.wrong_answers:
            ask = asks.get(wrong.ask)
            if ask is None:
                continue
            try:
                parse_answer(ask.kind, wrong.answer, ask.options)
            except AnswerError as exc:
                problems.append(f"{module.file}: drill {drill.id!r}: wrong answer {wrong.answer[:60]!r} for "
                                f"{ask.key!r} cannot be read as {ask.kind}: {exc}")
    return problems
