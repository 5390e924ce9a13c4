"""The author's commands: ``validate`` (schema and graph) and ``check`` (run every claim)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence, TextIO

from tutor.course import grants
from tutor.course.giveaway import course_giveaways
from tutor.course.schema import Drill, Module
from tutor.course.variants import instance_text, present_instance
from tutor.grading import describe_error
from tutor.judge import judge
from tutor.judge.kinds import form_examples
from tutor.sandbox.client import Sandbox
from tutor.sandbox.kernel_settings import KernelSettings
from tutor.tutoring.service import SandboxPort, TutoringService
from tutor.tutoring.symptoms import giveaway_problems
from tutor.commands.validation import Target, load_targets, unreadable_wrong_answers, validate  # noqa: F401 - re-exported
from tutor.wording import count


@dataclass
class DrillReport:
    module: str
    drill: str
    seconds: float
    problems: list[str]
    kind: str = "prediction"  # prediction | repair | lab, and "+processes" etc. for what it was granted
    observed: dict[str, str] = field(default_factory=dict)  # ask key -> observed value, for the giveaway check
    # a prediction's ask key -> the run's described value, which the judge reads: two kernel settings are
    # compared by judging one setting's observed answer against the other's value (tolerances apply)
    described: dict[str, dict] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)  # a lab run's failing tests' messages, by run, for reports
    asks: tuple = ()  # a variant drill's: the asks of the instance ``observed`` comes from (options rendered)

    @property
    def ok(self) -> bool:
        return not self.problems


def _examples_answering(ask, described) -> list[str]:
    """The answer box shows these before anything is typed: one that is right gives the drill away."""
    return [f"ask {ask.key!r}: the answer box's example {example!r} answers it; choose another in "
            f"tutor/judge/kinds.py" for example in form_examples(ask.kind) if judge(ask, example, described).correct]


VARIANT_SAMPLE = 2  # instances `check` draws beyond a variant drill's corners (PYTORCH_TUTOR_VARIANT_SAMPLE)
VARIANT_WIDEN = 4  # further instances check draws, one at a time, while those checked all observe the same answers
VARIANT_SEED = 29  # fixed: a check reruns the same instances, so a failure reproduces


def variant_sample() -> int:
    raw = os.environ.get("PYTORCH_TUTOR_VARIANT_SAMPLE", "")
    return int(raw) if raw.isdigit() else VARIANT_SAMPLE


async def check_drill(module: Module, drill: Drill, sandbox: SandboxPort,
                      gate: asyncio.Semaphore | None = None) -> DrillReport:
    """Run one drill and prove each of its claims; return what failed.

    A drill with variants is proved on every corner and a seeded sample of instances, each
    rendered as a learner would see it; one whose instances all observe the same answers is
    refused (a variant that changes nothing tests nothing new). Each instance is one unit of
    work: under ``gate`` (the check's workers) instances run side by side like separate drills.
    """
    gate = asyncio.Semaphore(1) if gate is None else gate

    async def one(shown: Drill) -> DrillReport:
        async with gate:
            return await _check_instance(module, shown, sandbox)

    if drill.variants is None:
        return await one(drill)
    sample = variant_sample()
    instances = drill.variants.sample(VARIANT_SEED, sample)
    rendered = [present_instance(drill, i) for i in instances]
    reports = list(await asyncio.gather(*(one(shown) for shown in rendered)))
    problems = [f"instance {instance_text(i)}: {p}" for i, r in zip(instances, reports) for p in r.problems]
    answers = {tuple(sorted(r.observed.items())) for r in reports}
    # Whether a variant changes the answer is a property of the drill, not of a small sample: while the
    # instances checked agree, draw further ones (each proved in full) before refusing it. (A pack that
    # passed when check drew more instances keeps passing: the seeded draw extends the smaller one.)
    while not problems and len(answers) < 2 and sample < variant_sample() + VARIANT_WIDEN:
        sample += 1
        more = [i for i in drill.variants.sample(VARIANT_SEED, sample) if i not in instances]
        if not more:
            break
        instances += tuple(more)
        shown_more = [present_instance(drill, i) for i in more]
        rendered += shown_more
        extra = list(await asyncio.gather(*(one(shown) for shown in shown_more)))
        reports += extra
        problems += [f"instance {instance_text(i)}: {p}" for i, r in zip(more, extra) for p in r.problems]
        answers |= {tuple(sorted(r.observed.items())) for r in extra}
    if not problems and len(instances) > 1 and len(answers) < 2:  # (one instance proves nothing either way)
        problems.append(f"the {len(instances)} instances checked all observe the same answers: "
                        "a variant must change what the learner predicts")
    first = reports[0]
    return DrillReport(module.id, drill.id, sum(r.seconds for r in reports), problems, first.kind, first.observed,
                       first.described, first.why, tuple(rendered[0].asks))


async def _check_instance(module: Module, drill: Drill, sandbox: SandboxPort) -> DrillReport:
    """Run one drill (one instance of a variant drill) and prove each of its claims; return what failed.

    The runs go through the same tutoring service as a learner's, with recording off.
    """
    service = TutoringService(None, sandbox)
    started = time.perf_counter()
    if drill.is_exercise:  # starter fails, reference passes, each wrong submission rejected by its test
        from tutor.judge.lab_check import lab_problems

        outcomes: dict[str, str] = {}
        why: dict[str, str] = {}
        problems = await lab_problems(drill, service, outcomes, why)
        return DrillReport(module.id, drill.id, time.perf_counter() - started, problems, _kind(drill), outcomes,
                           why=why)
    if drill.is_first_divergence:  # proved from the traces: the declared line, the wrong ones, the repair
        from tutor.judge.divergence_check import divergence_problems

        problems, observed = await divergence_problems(drill, service)
        return DrillReport(module.id, drill.id, time.perf_counter() - started, problems, _kind(drill), observed)
    problems: list[str] = []
    outcome = await service.observe(drill)
    result = outcome.result
    if not result.ok:
        problems.append(f"run: {result.message}")
        return DrillReport(module.id, drill.id, time.perf_counter() - started, problems + _output_tail(result), _kind(drill))
    obs = result.observation
    assert obs is not None
    observes_code_error = any(a.observes_code_error for a in drill.asks)
    if obs.error is not None and (obs.error.phase != "code" or not observes_code_error):
        problems.append(f"{obs.error.phase} raised {describe_error(obs.error)}")
    if obs.fence:
        problems.extend(f"fence rule: {f}" for f in obs.fence)
    if drill.is_repair:
        if obs.check != "failed":
            problems.append(f"check should fail on the seeded bug, but it {obs.check}")
    elif drill.check.strip() and obs.check != "passed":
        problems.append(f"check {obs.check}: {obs.check_text}")

    observed: dict[str, str] = {}
    described_by_key: dict[str, dict] = {}
    for ask_outcome in outcome.asks:
        ask = ask_outcome.ask
        if ask_outcome.problem:
            problems.append(f"ask {ask.key!r}: {ask_outcome.problem}")
            continue
        verdict = ask_outcome.verdict
        if verdict is None or (verdict.problem and not verdict.observed):
            problems.append(f"ask {ask.key!r}: {verdict.problem if verdict else 'not judged'}")
            continue
        described = obs.asks[ask.key].value
        observed[ask.key] = verdict.observed
        raised_bases = {b.lower() for b in described.get("bases", ())} if isinstance(described, dict) else set()
        problems.extend(f"ask {ask.key!r}: {base} is not a base class of what was raised ({verdict.observed})"
                        for base in ask.bases if base.lower() not in raised_bases)
        described_by_key[ask.key] = described
        if not judge(ask, verdict.observed, described).correct:
            problems.append(f"ask {ask.key!r}: the judge rejects the observed value typed back ({verdict.observed!r})")
        problems.extend(_examples_answering(ask, described))
        for wrong in drill.wrong_answers:
            if wrong.ask != ask.key:
                continue
            v = judge(ask, wrong.answer, described, drill.wrong_answers)
            if v.problem:
                problems.append(f"wrong answer {wrong.answer!r} for {ask.key!r} cannot be read: {v.problem}")
            elif v.correct:
                problems.append(f"wrong answer {wrong.answer!r} for {ask.key!r} is accepted: observed {v.observed}")

    problems.extend(view_problems(drill, obs))
    problems.extend(giveaway_problems(drill, outcome))  # a symptoms-first repair's output must not answer it
    if drill.is_repair:
        fixed = (await service.observe(drill, drill.solution)).result
        fixed_obs = fixed.observation
        if not fixed.ok or fixed_obs is None:
            problems.append(f"solution run: {fixed.message}")
        else:
            if fixed_obs.error is not None:
                problems.append(f"solution raised {describe_error(fixed_obs.error)}")
            if fixed_obs.check != "passed":
                problems.append(f"solution's check {fixed_obs.check}: {fixed_obs.check_text}")
            problems.extend(f"solution fence rule: {f}" for f in fixed_obs.fence)
            observed["the solution's check"] = fixed_obs.check
        if drill.wrong_submissions:  # each wrong fix rejected by the check, with the words it pins
            from tutor.judge.repair_check import wrong_fix_problems

            problems.extend(await wrong_fix_problems(drill, service, observed))
    if drill.check.strip():
        observed["the check"] = obs.check
    if problems:
        problems.extend(_output_tail(result))
    return DrillReport(module.id, drill.id, time.perf_counter() - started, problems, _kind(drill), observed,
                       described_by_key)


def answer_changes(drill: Drill, first: DrillReport, second: DrillReport) -> list[str]:
    """What a drill decided differently under two kernel settings, in words (empty: nothing moved).

    A prediction's answer moved when the answer observed under one setting is not accepted against
    the value observed under the other (so a float that moved inside the ask's tolerance did not);
    anything else (a first failing line, a check's verdict, which tests a lab submission passes)
    moved when its text differs. A drill that failed under either setting is reported as such.
    """
    if first.ok != second.ok:
        return ["passes its check under one setting only"]
    out = []
    for key in sorted(set(first.observed) | set(second.observed)):
        a, b = first.observed.get(key), second.observed.get(key)
        ask = next((x for x in first.asks or drill.asks if x.key == key), None)  # as the instance rendered it
        if ask is not None and key in first.described and key in second.described and a is not None and b is not None:
            moved = not (judge(ask, b, first.described[key]).correct and judge(ask, a, second.described[key]).correct)
        else:
            moved = a != b
        if moved:
            out.append(f"{key}: {a if a is not None else '(nothing)'} -> {b if b is not None else '(nothing)'}")
            if first.why.get(key) or second.why.get(key):
                out.append(f"  failing before: {first.why.get(key) or '-'}; after: {second.why.get(key) or '-'}")
    return out


def view_problems(drill: Drill, obs) -> list[str]:
    """Every declared view was made: it names something bound, of the right kind (a tensor, a module)."""
    declared = drill.all_views
    if not declared:
        return []
    if len(obs.views) != len(declared):
        return [f"views: {len(declared)} declared, {len(obs.views)} made (the code did not finish?)"]
    return [f"view {spec.kind} of {spec.of!r}: {view['error']}" for spec, view in zip(declared, obs.views)
            if "error" in view]


def _kind(drill: Drill) -> str:
    """How a drill's time should be read: labs train, repairs run four processes, grants start more."""
    kind = "lab" if drill.is_exercise else str(drill.kind) if drill.is_repair else "prediction"
    return kind + "".join(f"+{need}" for need in drill.needs)


def expected_cost(drill: Drill, wrong_submissions: bool = True) -> int:
    """A rough count of the runs one instance of a drill's check makes, for starting the longest
    work first (runs are not timed ahead): a repair or a lab runs its code more than once, a
    first-divergence drill traces two programs, each declared wrong submission is a judged run (two
    processes), a lab trains, and an Inductor compile outweighs everything else.

    Drills that start ranks (loopback) are deliberately not ranked up: their gloo rendezvous has a
    few seconds' timeout, and run beside the labs' compiles (the first work out) one timed out in CI
    (26/rendezvous-env); the lesson suite ran them after the labs before, with the predictions."""
    runs = 1 + (2 if drill.is_exercise or drill.is_repair or drill.is_first_divergence else 0)
    if wrong_submissions:
        runs += 2 * len(drill.wrong_submissions)
    return runs + (40 if "exec" in drill.needs else 0) + (4 if drill.is_exercise else 0)


def _timing_summary(reports: list[DrillReport]) -> list[str]:
    groups: dict[str, list[float]] = {}
    for r in reports:
        groups.setdefault(r.kind, []).append(r.seconds)
    return [f"  {kind:<28} {count(len(times), 'drill'):>10}, mean {sum(times) / len(times):5.2f} s, max {max(times):5.2f} s"
            for kind, times in sorted(groups.items())]


def _output_tail(result) -> list[str]:
    tail = result.output.strip().splitlines()[-6:]
    return [f"  | {line}" for line in tail] if tail else []


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
