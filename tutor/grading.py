"""From a drill to a run request, and from a run result to a drill outcome.

This is where the lesson format meets the sandbox and the judge; the tutoring
service (every front end, and ``pytorch-tutor check``) goes through it, so a
learner and an author see the same grading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from tutor.course.schema import Ask, Drill
from tutor.judge import ReadAnswer, Verdict, judge_read, labs, read_answer
from tutor.judge.contract_check import final_check
from tutor.judge.contracts import Failure, failures, place
from tutor.judge.divergence import divergence_text, is_right, misconception, render_line
from tutor.sandbox.bindings import bound_by_any
from tutor.sandbox.wire import AskSpec, ErrorInfo, RunRequest, TraceSpec, ViewSpec
from tutor.tutoring.states import CheckStatus, RunStatus
from tutor.sandbox.client import RunResult


def request_for(drill: Drill, code: str | None = None, files: Mapping[str, str] | None = None) -> RunRequest:
    """The run request for ``drill``, optionally with the learner's edited code.

    ``files``: a lab's other files and earlier stages by module name (see ``judge.labs``).
    """
    if drill.is_first_divergence:  # its one prediction is read from the trace, not asked of the sandbox
        return divergence_request(drill, code)
    asks = tuple(
        AskSpec(a.key, a.expr, "raises" if a.kind == "error" and a.expr else "value") for a in drill.asks
    )
    # A repair's or a lab's check decides a verdict on code that may be the learner's:
    # it runs in a process of its own (see ``Sandbox.run``).
    judged = drill.is_repair or drill.is_exercise
    # a module's shared setup runs first, in both halves of a judged run
    setup = full_setup(drill)
    code = drill.code if code is None else code
    views = tuple(ViewSpec(v.kind, v.of, v.optimizer) for v in drill.all_views)  # shown after the reveal
    return RunRequest(code=code, setup=setup, check=drill.check, asks=asks, timeout=drill.timeout,
                      needs=drill.needs, probe=drill.probe, threads=drill.threads, judged=judged, views=views,
                      declares=declared_names(drill) if judged else (), **labs.request_fields(drill, code, files))


def declared_names(drill: Drill) -> tuple[str, ...]:
    """The names a judged drill's own sources bind (its code, solution, starter), read from their text.

    The judge binds the learner's exported values under these (and what the probes bind),
    and takes a setup constant from them only when one of these sources rebinds it.
    """
    return tuple(sorted(bound_by_any(drill.code, drill.solution, drill.starter)))


def full_setup(drill: Drill) -> str:
    """A module's shared setup runs first, in both halves of a judged run."""
    return f"{drill.module_setup}\n{drill.setup}" if drill.module_setup.strip() else drill.setup


def divergence_request(drill: Drill, code: str | None = None, trace_function: str | None = None) -> RunRequest:
    """A first-divergence drill's run: traced (with its `holds:` expressions), judged on the final values too."""
    spec = drill.divergence
    trace = TraceSpec(function=spec.trace_function if trace_function is None else trace_function, holds=spec.holds,
                      watch=tuple(c.name for c in spec.contracts))
    return RunRequest(code=drill.code if code is None else code, setup=full_setup(drill),
                      check=final_check(spec), timeout=drill.timeout, needs=drill.needs, judged=True, trace=trace,
                      threads=drill.threads,
                      declares=declared_names(drill),
                      modules=drill.helpers, judge_modules=drill.helpers)  # the setup may import a course helper


def trace_request(drill: Drill, code: str | None = None) -> RunRequest:
    """Any drill's code run traced, for the trace panel: no asks, no check, nothing judged."""
    if drill.is_first_divergence:
        return divergence_request(drill, code)
    return RunRequest(code=drill.code if code is None else code, setup=full_setup(drill), timeout=drill.timeout,
                      needs=drill.needs, modules=drill.helpers, trace=TraceSpec(), threads=drill.threads)


def read_answers(drill: Drill, texts: Mapping[str, str]) -> dict[str, ReadAnswer]:
    """Every ask's answer read once, keyed by ask key (a missing answer reads as empty)."""
    return {ask.key: read_answer(ask, texts.get(ask.key, "")) for ask in drill.asks}


@dataclass
class AskOutcome:
    ask: Ask
    said: ReadAnswer
    verdict: Verdict | None = None  # None when the value could not be observed
    problem: str = ""  # why it could not be observed

    @property
    def answer(self) -> str:
        return self.said.text

    @property
    def correct(self) -> bool:
        return self.verdict is not None and self.verdict.correct


@dataclass
class DrillOutcome:
    result: RunResult
    asks: list[AskOutcome] = field(default_factory=list)
    tests: list[labs.LabTestResult] = field(default_factory=list)  # a lab's named tests (its `check` is one)
    misconception: str = ""  # a lab: the learner's file is a listed wrong submission
    # a first-divergence drill: every contract failure the trace shows (each name at its first), in row order
    contract_failures: list[Failure] | None = None

    @property
    def status(self) -> RunStatus:
        return RunStatus.read(self.result.status)

    @property
    def error(self) -> ErrorInfo | None:
        return self.result.observation.error if self.result.observation else None

    @property
    def check(self) -> CheckStatus:
        if self.compile_error is not None and self.result.observation.check != "skipped":
            return CheckStatus.NOT_RUN  # whatever it said is about names the code never bound
        return CheckStatus(self.result.observation.check) if self.result.observation else CheckStatus.SKIPPED

    @property
    def check_message(self) -> str:
        if self.check == CheckStatus.NOT_RUN:
            return f"the code has a {self.compile_error.type}"
        return self.result.observation.check_text if self.result.observation else ""

    @property
    def fence(self) -> list[str]:
        return self.result.observation.fence if self.result.observation else []

    @property
    def compile_error(self) -> ErrorInfo | None:
        """The code could not even be compiled: nothing after the error ran, no ask was evaluated."""
        error = self.error
        return error if error is not None and error.type in COMPILE_ERRORS else None

    @property
    def predictions_correct(self) -> bool:
        return self.result.ok and bool(self.asks) and all(a.correct for a in self.asks)

    @property
    def code_passes(self) -> bool:
        """Edited code counts as repaired or solved when it runs cleanly and its check (or every test) passes."""
        if not (self.result.ok and not self.fence and self.error is None):
            return False
        # A first-divergence repair too is decided by the judge's check alone (the contracts on the final
        # values, in a fresh process): its trace rows were recorded where the learner's code ran, so they
        # are shown, never read here (tests/sandbox/test_sandbox_trace.py forges some).
        return all(t.passed for t in self.tests) if self.tests else self.check == CheckStatus.PASSED

    def first_divergence(self) -> str:
        """The first place, in ask order, where prediction and observation part ways."""
        if not self.result.ok:
            return self.result.message
        if self.compile_error is not None:
            return describe_error(self.compile_error)
        for outcome in self.asks:
            if outcome.problem:
                return f"{outcome.ask.question} — {outcome.problem}"
            if outcome.verdict and outcome.verdict.divergence:
                return outcome.verdict.divergence
        return ""


COMPILE_ERRORS = ("SyntaxError", "IndentationError", "TabError")
# Python's own "(<snippet>, line 3)" tail: the line is said once, in the learner's words.
_COMPILER_WHERE = re.compile(r"\s*\(<\w+>, line \d+\)$")


def describe_error(error: ErrorInfo) -> str:
    where = f" (line {error.line} of the {error.phase})" if error.line else f" (in the {error.phase})"
    message = _COMPILER_WHERE.sub("", error.message) if error.type in COMPILE_ERRORS else error.message
    return f"{error.type}: {message}{where}"


def grade(drill: Drill, answers: Mapping[str, str], result: RunResult) -> DrillOutcome:
    """Read typed answers (keyed by ask key) and judge them against what the run observed."""
    return grade_read(drill, read_answers(drill, answers), result)


def grade_read(drill: Drill, said: Mapping[str, ReadAnswer], result: RunResult) -> DrillOutcome:
    """Judge each answer, already read (keyed by ask key), against what the run observed."""
    outcome = DrillOutcome(result)
    observation = result.observation
    if drill.is_first_divergence:
        return _grade_divergence(drill, said, outcome)
    if drill.is_exercise and result.ok:
        outcome.tests = labs.test_results(drill, observation)
        outcome.misconception = labs.misconception(drill, observation)
    for ask in drill.asks:
        answer = said.get(ask.key) or read_answer(ask, "")
        if observation is None:
            outcome.asks.append(AskOutcome(ask, answer, problem=result.message))
            continue
        if outcome.compile_error is not None:
            # every NameError an ask would show is a consequence; the cause is said once, first
            error = outcome.compile_error
            line = f" on line {error.line}" if error.line else ""
            outcome.asks.append(AskOutcome(ask, answer, problem=f"not evaluated: the {error.phase} has a "
                                                                 f"{error.type}{line}"))
            continue
        observed = observation.asks.get(ask.key)
        if observed is None or observed.value is None:
            if observed is not None and observed.error is not None:
                why = "evaluating it raised " + describe_error(observed.error)
            elif observation.error is not None:
                why = "the code raised " + describe_error(observation.error)
            else:
                why = "it was not observed"
            outcome.asks.append(AskOutcome(ask, answer, problem=why))
            continue
        outcome.asks.append(AskOutcome(ask, answer, judge_read(ask, answer, observed.value, drill.wrong_answers)))
    return outcome


def _grade_divergence(drill: Drill, said: Mapping[str, ReadAnswer], outcome: DrillOutcome) -> DrillOutcome:
    """The learner's line against the first failing row of the real run's trace (never the declared answer)."""
    ask = drill.asks[0]
    answer = said.get(ask.key) or read_answer(ask, "")
    observation = outcome.result.observation
    trace = observation.trace if observation is not None else None
    if observation is None or trace is None or trace.problem:
        why = outcome.result.message if observation is None else (
            trace.problem if trace is not None else "the run was not traced")
        outcome.asks.append(AskOutcome(ask, answer, problem=why))
        return outcome
    if outcome.compile_error is not None:
        outcome.asks.append(AskOutcome(ask, answer, problem=f"not traced: the code has a {outcome.compile_error.type}"))
        return outcome
    spec = drill.divergence
    # the rows answer "which line?" of the drill's own code and mark the trace; the check (a repair's
    # verdict) stays the judge's own, made on the final values in a process the code never ran in
    outcome.contract_failures = failures(trace, spec.contracts, observation.error)
    observation.check_line = None  # a line of the generated check means nothing to a learner
    first = outcome.contract_failures[0] if outcome.contract_failures else None
    if first is None:
        outcome.asks.append(AskOutcome(ask, answer, problem="every contract holds on every row of this run"))
        return outcome
    stage = spec.stage_of(first.line)
    observed = place(first.line, "", first.iteration) + (f" (stage {stage.name})" if stage else "")
    if not answer.readable:
        outcome.asks.append(AskOutcome(ask, answer, Verdict(False, "", observed, problem=answer.problem)))
        return outcome
    right = is_right(answer.value, first, spec)
    verdict = Verdict(right, render_line(answer.value), observed,
                      divergence="" if right else divergence_text(answer.value, first, spec),
                      misconception="" if right else misconception(answer.value, drill.wrong_answers, ask.options))
    outcome.asks.append(AskOutcome(ask, answer, verdict))
    return outcome
