"""The author's commands: ``validate`` (schema and graph) and ``check`` (run every claim)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence, TextIO

from tutor.course import grants
from tutor.course.giveaway import course_giveaways
from tutor.course.schema import Drill, Module
from tutor.sandbox.client import Sandbox
from tutor.sandbox.kernel_settings import KernelSettings
from tutor.tutoring.service import SandboxPort
from tutor.commands.drill_proof import DrillReport, answer_changes, check_drill, expected_cost
from tutor.commands.validation import Target, load_targets, unreadable_wrong_answers, validate  # noqa: F401 - re-exported
from tutor.wording import count


def _timing_summary(reports: list[DrillReport]) -> list[str]:
    groups: dict[str, list[float]] = {}
    for r in reports:
        groups.setdefault(r.kind, []).append(r.seconds)
    return [f"  {kind:<28} {count(len(times), 'drill'):>10}, mean {sum(times) / len(times):5.2f} s, max {max(times):5.2f} s"
            for kind, times in sorted(groups.items())]


async def _check_all(jobs: list[tuple[Module, Drill]], parallel: int, out: TextIO,
                     sandbox_options: dict | None = None) -> list[DrillReport]:
    sandbox = Sandbox(**(sandbox_options or {}))
    try:  # the zygote's start (an import of torch, and torch.compile's modules where the course compiles)
        await sandbox.start()  # is not any drill's time
        await sandbox.compile_warmed()
    except Exception:  # noqa: BLE001 - each run then reports why the sandbox could not start
        pass
    try:
        return await check_jobs(jobs, parallel, out, sandbox)
    finally:
        await sandbox.close()


async def check_jobs(jobs: list[tuple[Module, Drill]], parallel: int, out: TextIO,
                     sandbox: SandboxPort) -> list[DrillReport]:
    """Check every drill on ``parallel`` workers; the reports come back in the jobs' order.

    Each instance of a variant drill is a unit of work of its own, and the costliest kinds queue
    first (the gate serves waiters in arrival order): the check does not end on one worker
    finishing a lab alone while the other has nothing left."""
    gate = asyncio.Semaphore(parallel)
    # One Inductor compile at a time: two cold C++ builds on two cores ran past the drills' own limits.
    compiling = asyncio.Semaphore(1)

    async def one(module: Module, drill: Drill) -> DrillReport:
        async with compiling if "exec" in drill.needs else contextlib.nullcontext():
            report = await check_drill(module, drill, sandbox, gate)
        mark = "ok  " if report.ok else "FAIL"
        print(f"{mark} {module.id}/{drill.id:<40} {report.seconds:5.2f} s", file=out, flush=True)
        if not report.ok:  # where to edit: the drill's first line in its file
            print(f"       at {module.file}:{drill.line}", file=out)
        for problem in report.problems:
            print(f"       {problem}", file=out)
        return report

    order = sorted(range(len(jobs)), key=lambda i: expected_cost(jobs[i][1]), reverse=True)  # stable
    done = dict(zip(order, await asyncio.gather(*(one(*jobs[i]) for i in order))))
    return [done[i] for i in range(len(jobs))]


def third_party_grants_refusal(targets: list[Target], allow_grants: bool,
                               consent: Callable[[str], bool] | None) -> str:
    """Why the drills of ``targets`` from outside the built-in course may not run with what they ask for ("")."""
    from tutor.locations import builtin_course_dir
    from tutor.startup import grants_refusal

    builtin = builtin_course_dir().resolve()
    by_root: dict[Path, list] = {}
    for target in targets:
        root = (target.course.root if target.course is not None else Path(target.label).parent).resolve()
        if root != builtin:
            by_root.setdefault(root, []).extend(target.modules)
    for root, modules in by_root.items():
        refusal = grants_refusal(root, grants.requested(modules), allow_grants, consent)
        if refusal:
            return refusal
    return ""


def _print_grants(targets: list[Target], out: TextIO) -> None:
    """What the drills ask the sandbox for beyond its default confinement (a learner is asked to accept it)."""
    wanted = grants.requested(m for t in targets for m in t.modules)
    if wanted:
        print("grants requested (a learner accepts them once per pack):\n" + grants.describe(wanted), file=out)


def check(paths: Iterable[Path], out: TextIO, drill_id: str | Iterable[str] | None = None, parallel: int | None = None,
          settings: Sequence[KernelSettings] = (), allow_grants: bool = False,
          consent: Callable[[str], bool] | None = None) -> int:
    """Run every drill and prove its claims; under each of ``settings`` in turn when given (a drill must
    decide the same under all of them: what moved is reported and fails the check). 2 when a pack's grants
    were not allowed (``allow_grants`` or ``consent``, as ``startup.grants_refusal`` rules), before anything ran."""
    started = time.perf_counter()
    targets = load_targets(paths)
    errors = [e for t in targets for e in t.errors]
    for error in errors:
        print(error, file=out)
    _print_grants(targets, out)
    refusal = third_party_grants_refusal(targets, allow_grants, consent)
    if refusal:
        print(f"pytorch-tutor: {refusal}", file=sys.stderr)
        return 2
    wanted = {drill_id} if isinstance(drill_id, str) else set(drill_id or ())  # --drill, repeated
    jobs = [(m, d) for t in targets for m in t.modules for d in m.drills if not wanted or d.id in wanted]
    missing = sorted(wanted - {d.id for _, d in jobs})
    if missing:
        print(f"check: no drill with id {', '.join(map(repr, missing))}", file=out)
        return 1
    settings = list(dict.fromkeys(settings)) or [KernelSettings()]
    for setting in settings:
        problem = setting.problem()
        if problem:
            print(f"check: cannot run under {setting.label}: {problem}", file=out)
            return 2
    parallel = parallel or max(1, os.cpu_count() or 1)
    # A module file checked on its own belongs to the course of its directory: the built-in
    # course's files need its code (capstone) just as the whole course does. One course gets
    # its own sandbox options, compile cache included (never one course's cache for another).
    roots = {t.course.root if t.course is not None else Path(t.label).parent for t in targets}
    if len(roots) == 1:
        options = grants.sandbox_options(next(iter(roots)), [m for t in targets for m in t.modules])
    else:
        options = {"read_only": [p for root in roots for p in grants.code_dirs(root)]}
    runs: dict[KernelSettings, list[DrillReport]] = {}
    for setting in settings:
        if len(settings) > 1 or setting != KernelSettings():
            print(f"== under {setting.label}: {setting.describe()}", file=out, flush=True)
        runs[setting] = asyncio.run(_check_all(jobs, parallel, out, {**options, "kernels": setting}))
    reports = runs[settings[0]]
    failed = {(r.module, r.drill) for rs in runs.values() for r in rs if not r.ok}
    fresh: dict[str, dict[str, dict[str, str]]] = {}
    for (module, drill), report in zip(jobs, reports):
        if report.ok:
            keys = {a.key for a in drill.asks}
            fresh.setdefault(module.file, {})[drill.id] = {k: v for k, v in report.observed.items() if k in keys}
    warnings = course_giveaways((m for t in targets for m in t.modules), fresh)
    for warning in [*warnings, *(w for t in targets if t.course is not None for w in t.course.warnings)]:
        print(warning, file=out)
    moved = _print_changes(jobs, runs, out)
    elapsed = time.perf_counter() - started
    slowest = sorted(reports, key=lambda r: r.seconds, reverse=True)[:3]
    if slowest:
        print("slowest: " + ", ".join(f"{r.module}/{r.drill} {r.seconds:.2f} s" for r in slowest), file=out)
        print("time by kind (wall time per drill, after the sandbox's start):", file=out)
        for line in _timing_summary(reports):
            print(line, file=out)
    status = ("ok" if not failed and not errors and not moved else
              f"{count(len(failed), 'drill')} failed, {count(len(errors), 'file error')}")
    status += f", {count(moved, 'drill')} decided differently between settings" if moved else ""
    status += f", {count(len(warnings), 'giveaway warning')}" if warnings else ""
    under = f" under {count(len(settings), 'setting')}" if len(settings) > 1 else ""
    print(f"check: {status} — {count(len(reports), 'drill')}{under} in {elapsed:.1f} s on "
          f"{count(parallel, 'worker')}", file=out)
    return 1 if failed or errors or moved else 0


def _print_changes(jobs: list[tuple[Module, Drill]], runs: dict[KernelSettings, list[DrillReport]],
                   out: TextIO) -> int:
    """Every drill that decided differently under another setting than under the first; their number."""
    settings = list(runs)
    moved = 0
    for i, (module, drill) in enumerate(jobs):
        lines = [f"  {settings[0].label} -> {other.label}: {change}" for other in settings[1:]
                 for change in answer_changes(drill, runs[settings[0]][i], runs[other][i])]
        if lines:
            if not moved:
                print("decided differently between settings (a drill must hold on any machine):", file=out)
            moved += 1
            print(f"MOVED {module.id}/{drill.id}", file=out)
            for line in lines:
                print(line, file=out)
    return moved


def migrate(paths: list[Path], target: int | None, dry_run: bool, backup: bool, out: TextIO) -> int:
    """`pytorch-tutor migrate`: each module file rewritten in format ``target`` (see ``tutor.course.migrate``)."""
    from tutor.course.migrate import migrate_paths
    from tutor.course.schema import FORMAT_VERSION, READABLE_VERSIONS

    target = FORMAT_VERSION if target is None else target
    if target not in READABLE_VERSIONS:
        print(f"migrate: this tutor writes format {', '.join(map(str, READABLE_VERSIONS))}, not {target}", file=out)
        return 2
    failed = 0
    for m in migrate_paths(paths, target, write=not dry_run, backup=backup):
        if m.problem and m.before and m.after == m.before and m.problem.startswith("already"):
            print(f"{m.path}: {m.problem}", file=out)
            continue
        if m.problem:
            failed += 1
            print(f"{m.path}: not migrated: {m.problem}", file=out)
            continue
        verb = "would go" if dry_run else "went"
        print(f"{m.path}: {verb} from format {m.before} to {m.after}", file=out)
        for change in m.changes:
            print(f"  {change}", file=out)
        if m.backup is not None:
            print(f"  the original is kept at {m.backup}", file=out)
    return 1 if failed else 0
