"""One drill's claims, proved: ``check_drill`` runs a drill (every corner and a seeded sample of a
variant drill's instances) through the tutoring service with recording off, and says what failed.

``tutor.commands.authoring`` runs many of these for the ``check`` command; the lesson suite and the
benchmarks call them directly.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field

from tutor.course.schema import Drill, Module
from tutor.course.variants import instance_text, present_instance
from tutor.grading import describe_error
from tutor.judge import judge
from tutor.judge.kinds import form_examples
from tutor.tutoring.service import SandboxPort, TutoringService
from tutor.tutoring.symptoms import giveaway_problems


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
    instances: list = []
    rendered: list[Drill] = []
    reports: list[DrillReport] = []

    async def prove(batch) -> None:
        shown = [present_instance(drill, i) for i in batch]
        reports.extend(await asyncio.gather(*(one(s) for s in shown)))
        instances.extend(batch)
        rendered.extend(shown)

    sample = variant_sample()
    await prove(drill.variants.sample(VARIANT_SEED, sample))
    # Whether a variant changes the answer is a property of the drill, not of a small sample: while the
    # instances checked agree, draw further ones (each proved in full) before refusing it. (A pack that
    # passed when check drew more instances keeps passing: the seeded draw extends the smaller one.)
    for wider in range(sample + 1, sample + VARIANT_WIDEN + 1):
        if any(r.problems for r in reports) or len({tuple(sorted(r.observed.items())) for r in reports}) > 1:
            break
        await prove([i for i in drill.variants.sample(VARIANT_SEED, wider) if i not in instances])
    problems = [f"instance {instance_text(i)}: {p}" for i, r in zip(instances, reports) for p in r.problems]
    answers = {tuple(sorted(r.observed.items())) for r in reports}
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


def _output_tail(result) -> list[str]:
    tail = result.output.strip().splitlines()[-6:]
    return [f"  | {line}" for line in tail] if tail else []
