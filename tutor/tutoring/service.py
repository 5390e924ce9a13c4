"""The tutoring service: every learner action, end to end, for every front end.

Each use case reads what the learner said (once), runs it in the sandbox, grades
it, decides what the profile records (and whether a spaced-review card is rated),
and returns a report (:mod:`tutor.tutoring.reports`). The TUI, plain mode and
``pytorch-tutor check`` (with recording off) all call this; none of them wires
parse -> run -> grade -> record -> unlock itself. No Textual here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping, Protocol

from tutor.course.schema import Drill
from tutor.course.variants import present_drill_instance
from tutor.grading import DrillOutcome, describe_error, grade_read, read_answers, request_for, trace_request
from tutor.judge import ReadAnswer, labs
from tutor.progress.review import rating_for
from tutor.progress.store import ATTEMPT_NOTE, Attempt, AttemptKind
from tutor.sandbox.client import RunResult
from tutor.sandbox.wire import RunRequest, TraceSpec, ViewSpec
from tutor.session import Session
from tutor.tutoring.reports import (NOT_RECORDED_FILE, NOT_RECORDED_OFF, NOT_RECORDED_UNFINISHED,
                                    NOT_RECORDED_UNREADABLE, AskRow, ModuleRef, Recorded, RunReport, SnippetReport,
                                    ViewReport)
from tutor.safe_text import inert
from tutor.tutoring import instances
from tutor.tutoring.drafts import Drafts
from tutor.tutoring.self_checks import SelfCheckUseCases
from tutor.tutoring.symptoms import SymptomsUseCases
from tutor.tutoring.states import Outcome, RunStatus
from tutor.tutoring.trace_view import TraceReport, trace_report
from tutor.value_text import describe_briefly
from tutor.workspace import Workspace, exercise_path, lab_files, read_exercise

class SandboxPort(Protocol):
    """What the service needs from a sandbox (the real one, or a test's fake)."""

    async def start(self) -> None: ...

    async def run(self, request: RunRequest) -> RunResult: ...

    async def close(self) -> None: ...


class TutoringService(SelfCheckUseCases, SymptomsUseCases):
    """One learner's actions on one course; ``session=None`` turns recording off (an author's check).

    The self-check and placement use cases are in :mod:`tutor.tutoring.self_checks`.

    ``workspace``: the learner's lab files for this course (a front end with labs passes it).
    """

    def __init__(self, session: Session | None, sandbox: SandboxPort, workspace: Workspace | None = None,
                 on_run: Callable[[], None] | None = None):
        self.session = session
        self.sandbox = sandbox
        self.workspace = workspace
        self.drafts = Drafts(session.store if session is not None else None)
        # called just before each sandbox run: a front end says "running" only when something runs
        # (an unreadable lab file, an unreadable answer run nothing and come back at once)
        self.on_run = on_run

    async def _run(self, request: RunRequest) -> RunResult:
        if self.on_run is not None:
            self.on_run()
        return await self.sandbox.run(request)

    async def start(self) -> None:
        """Warm the sandbox up (a front end does this at once, in the background)."""
        await self.sandbox.start()

    async def close(self) -> None:
        """Stop the sandbox and everything it started."""
        await self.sandbox.close()

    # ---------------------------------------------------------------- reading what was said

    @staticmethod
    def read_answers(drill: Drill, texts: Mapping[str, str]) -> dict[str, ReadAnswer]:
        """The learner's answers read once; a front end shows each unreadable one's problem."""
        return read_answers(drill, texts)

    async def observe(self, drill: Drill, code: str | None = None, said: Mapping[str, ReadAnswer] | None = None,
                      files: Mapping[str, str] | None = None) -> DrillOutcome:
        """Run ``drill`` (or the learner's ``code`` for it) and grade ``said`` against what was seen.

        ``files``: a lab's other files and earlier stages by module name (see ``judge.labs``).
        """
        result = await self._run(request_for(drill, code, files))
        return grade_read(drill, said or read_answers(drill, {}), result)

    async def run_snippet(self, code: str, timeout: float, source: str = "",
                          trace_function: str | None = None, views: tuple[ViewSpec, ...] = ()) -> SnippetReport:
        """Run any snippet once (``pytorch-tutor run``): what it printed, bound, raised and broke.

        ``trace_function`` not None: traced too (``run --trace``), inside that function when it names one.
        ``views``: views of names it bound (``run --view graph loss``), made after it ran.
        """
        trace = TraceSpec(function=trace_function) if trace_function is not None else None
        result = await self._run(RunRequest(code=code, timeout=timeout, trace=trace, views=views))
        obs = result.observation
        base = dict(source=source, status=RunStatus.read(result.status), seconds=result.seconds,
                    output=result.output, output_truncated=result.output_truncated)
        if obs is None or not result.ok:
            return SnippetReport(message=result.message, **base)
        return SnippetReport(
            variables=tuple((inert(name), describe_briefly(value)) for name, value in obs.variables.items()),
            error=describe_error(obs.error) if obs.error else "", error_type=inert(obs.error.type) if obs.error else "",
            fence=tuple(obs.fence), trace=trace_report(obs.trace, error=obs.error), views=tuple(obs.views), **base)

    # ---------------------------------------------------------------- drills

    def code_for(self, module_id: str, drill: Drill) -> str:
        """The drill's code as the learner last edited it, else its own."""
        return self.drafts.code(module_id, drill.id) or drill.code

    def keep_code(self, module_id: str, drill: Drill, code: str) -> None:
        self.drafts.keep_code(module_id, drill.id, code, drill.code)

    def reset_code(self, module_id: str, drill: Drill) -> str:
        """Forget the learner's edits; the drill's own code again."""
        self.drafts.reset_code(module_id, drill.id)
        return drill.code

    def draft_answers(self, module_id: str, drill: Drill) -> dict[str, str]:
        """What the learner last typed in the drill's boxes and has not had verified (kept across relaunches)."""
        keys = {ask.key for ask in drill.asks}
        return {key: text for key, text in self.drafts.answers(module_id, drill.id).items() if key in keys}

    def keep_answers(self, module_id: str, drill: Drill, texts: Mapping[str, str]) -> None:
        self.drafts.keep_answers(module_id, drill.id, texts)

    def last_predicted(self, module_id: str, drill: Drill) -> dict[str, str]:
        """The answers of the drill's last recorded prediction (an earlier session's too), else {}."""
        said = self._predictions(module_id, drill)
        return {key: str(value) for key, value in said[-1].answers.items()} if said else {}

    def last_verified(self, module_id: str, drill: Drill) -> RunReport | None:
        """A verified drill revisited: the prediction that verified it, beside what was observed then."""
        if not self._done(module_id, drill):
            return None
        right = [a for a in self._predictions(module_id, drill) if a.correct]
        if not right:
            return None
        last = right[-1]
        if not instances.verified_on(drill, last):
            return None  # another instance is open (practice, review): nothing of the verified one is shown
        rows = tuple(AskRow(ask.key, ask.question, str(last.answers.get(ask.key, "")),
                            str(last.observed.get(ask.key, "")), True) for ask in drill.asks)
        return RunReport(module_id, drill.id, AttemptKind.PREDICTION, Outcome.VERIFIED, said=dict(last.answers),
                         status=RunStatus.OK, rows=rows, drill_done=True)

    # ---------------------------------------------------------------- review and retry: what is presented

    def in_review(self, module_id: str, drill: Drill) -> bool:
        """The drill is due for spaced review: it opens for recall, its earlier answers and results hidden."""
        return self.session is not None and self.session.review.is_due(module_id, drill.id)

    def nothing_recalled(self, module_id: str, drill: Drill, texts: Mapping[str, str],
                         shown: Mapping[str, str]) -> bool:
        """A review's answers are no prediction: a box empty, or every box as the screen showed it."""
        return self.in_review(module_id, drill) and _nothing_recalled(drill, texts, shown)

    def present(self, module_id: str, drill: Drill) -> Drill:
        """The drill as the learner predicts it now: for a drill with variants, an instance whose answers
        they have not been shown (the open one, else a fresh draw; see :mod:`tutor.tutoring.instances`).
        Every front end opens a drill through this; trace, views and misconceptions then use what it gave."""
        if drill.variants is None:
            return drill
        chosen, seed, drawn = instances.choose(drill, self._predictions(module_id, drill),
                                               self.drafts.seed(module_id, drill.id), self._done(module_id, drill),
                                               self.in_review(module_id, drill))
        if drawn:
            self._open_instance(module_id, drill, seed)
        return chosen

    def fresh_instance(self, module_id: str, drill: Drill) -> Drill:
        """Another instance to predict (after a wrong answer, or at will): none answered before while one is left."""
        if drill.variants is None:
            return drill
        shown = instances.answered(self._predictions(module_id, drill))
        seed = instances.fresh_seed(drill.template or drill, shown + [instances.key(drill)])
        self._open_instance(module_id, drill, seed)
        return present_drill_instance(drill.template or drill, seed)

    def instance_already_answered(self, module_id: str, drill: Drill) -> bool:
        """This instance's answers have been shown, and the drill is not verified: a prediction of it certifies nothing."""
        return (drill.variants is not None and not self._done(module_id, drill)
                and instances.key(drill) in instances.answered(self._predictions(module_id, drill)))

    def _open_instance(self, module_id: str, drill: Drill, seed: int) -> None:
        self.drafts.keep_seed(module_id, drill.id, seed)
        self.drafts.forget_answers(module_id, drill.id)  # typed for another instance
        self.drafts.reset_code(module_id, drill.id)

    def _predictions(self, module_id: str, drill: Drill) -> list[Attempt]:
        if self.session is None:
            return []
        return [a for a in self.session.store.attempts(module_id)
                if a.item == drill.id and a.kind == AttemptKind.PREDICTION]

    async def submit_prediction(self, module_id: str, drill: Drill, said: Mapping[str, ReadAnswer],
                                seconds: float, confidence: int | None = None,
                                shown: Mapping[str, str] | None = None) -> RunReport:
        """Predict, then observe: the drill is verified when every prediction matches.

        ``shown``: what the answer boxes held when the drill opened. A drill due for review is
        recall: answers left empty, or left as the screen showed them, run nothing and rate
        nothing (the report says to predict); the review's rating comes from a new prediction.
        """
        texts = {key: a.text for key, a in said.items()}
        if self.instance_already_answered(module_id, drill):
            return RunReport(module_id, drill.id, AttemptKind.PREDICTION, Outcome.FRESH_INSTANCE, said=texts,
                             not_recorded=FRESH_INSTANCE_NEEDED, drill_done=False)
        if self.nothing_recalled(module_id, drill, texts, shown or {}):
            return RunReport(module_id, drill.id, AttemptKind.PREDICTION, Outcome.RECALL_NEEDED, said=texts,
                             problems={drill.asks[0].key: RECALL_NEEDED} if drill.asks else {},
                             not_recorded=RECALL_NEEDED, drill_done=self._done(module_id, drill))
        problems = {key: a.problem for key, a in said.items() if not a.readable}
        if problems:
            return RunReport(module_id, drill.id, AttemptKind.PREDICTION, Outcome.UNREADABLE, said=texts,
                             problems=problems, not_recorded=NOT_RECORDED_UNREADABLE,
                             drill_done=self._done(module_id, drill))
        outcome = self.graded_symptoms(module_id, drill, said) or await self.observe(drill, None, said)
        if not outcome.result.ok:
            return self._report(module_id, drill, AttemptKind.PREDICTION, Outcome.NOT_FINISHED, texts, outcome)
        correct = outcome.predictions_correct
        recorded, unlocked = self._record_prediction(module_id, drill, texts, outcome, seconds, confidence)
        if correct:  # the drill (or its symptom) verified: the boxes start from the verified answers again
            self.drafts.forget_answers(module_id, drill.id)
        if not correct:
            verdict = Outcome.NOT_YET
        elif drill.is_repair and not self._done(module_id, drill):
            verdict = Outcome.SYMPTOM_FOUND
        else:
            verdict = Outcome.VERIFIED
        return self._report(module_id, drill, AttemptKind.PREDICTION, verdict, texts, outcome, recorded, unlocked)

    async def run_experiment(self, module_id: str, drill: Drill, code: str, seconds: float,
                             last_said: Mapping[str, ReadAnswer] | None = None) -> RunReport:
        """Change one thing and rerun: the last predictions are shown against the new observation."""
        return await self._code_run(module_id, drill, code, seconds, AttemptKind.EXPERIMENT, last_said)

    async def submit_repair(self, module_id: str, drill: Drill, code: str, seconds: float) -> RunReport:
        """A repair drill's fix: repaired when it runs cleanly and its check passes."""
        return await self._code_run(module_id, drill, code, seconds, AttemptKind.REPAIR)

    async def check_lab(self, module_id: str, drill: Drill, code: str, seconds: float,
                        files: Mapping[str, str] | None = None) -> RunReport:
        """A lab's file (and its other ``files``) against its tests: solved when they all pass."""
        return await self._code_run(module_id, drill, code, seconds, AttemptKind.EXERCISE, files=files)

    async def check_lab_file(self, module_id: str, drill: Drill, seconds: float) -> RunReport:
        """The learner's lab file, as saved in the workspace, against the lab's tests (what a front end calls).

        Read here, containment-checked (``tutor.workspace``), with the lab's other files and
        earlier stages; a file that is missing, unreadable or not UTF-8 runs nothing and
        records nothing: the report's ``problems["code"]`` says what to do, the file is untouched.
        """
        try:
            code, files, stages = self._lab_inputs(module_id, drill)
        except ValueError as exc:
            return RunReport(module_id, drill.id, AttemptKind.EXERCISE, Outcome.FILE_UNREADABLE,
                             problems={"code": str(exc)}, not_recorded=NOT_RECORDED_FILE,
                             drill_done=self._done(module_id, drill))
        report = await self.check_lab(module_id, drill, code, seconds, files)
        return replace(report, stages=tuple(stages))

    async def _code_run(self, module_id: str, drill: Drill, code: str, seconds: float, kind: AttemptKind,
                        last_said: Mapping[str, ReadAnswer] | None = None,
                        files: Mapping[str, str] | None = None) -> RunReport:
        outcome = await self.observe(drill, code, last_said, files)
        said = {"code": code}
        if not outcome.result.ok:
            return self._report(module_id, drill, kind, Outcome.NOT_FINISHED, said, outcome)
        passed = outcome.code_passes
        if kind == AttemptKind.REPAIR and not passed and not outcome.misconception:
            outcome.misconception = labs.repair_misconception(drill, code)  # a declared wrong fix, shown as a lab's is
        recorded = None
        unlocked: list[str] = []
        if self.session is not None:
            unlocked = self.session.record(Attempt(
                module=module_id, item=drill.id, kind=kind, correct=passed, answers={"code": code},
                observed=_observed(outcome), verdict={"check": str(outcome.check)}, seconds=seconds))
            recorded = Recorded(kind, passed)
        if kind == AttemptKind.EXPERIMENT:
            verdict = Outcome.OBSERVED
        elif not passed:
            verdict = Outcome.CHECK_FAILS
        elif kind == AttemptKind.EXERCISE:
            verdict = Outcome.SOLVED
        else:
            verdict = Outcome.REPAIRED if self._done(module_id, drill) else Outcome.REPAIRED_PREDICT_NEXT
        return self._report(module_id, drill, kind, verdict, said, outcome, recorded, unlocked)

    async def open_view(self, module_id: str, drill: Drill, code: str | None, kind: str, of: str,
                        optimizer: str = "", files: Mapping[str, str] | None = None) -> ViewReport:
        """A view of any name the drill's code (or the learner's ``code``) binds: run, not judged, not recorded.

        Only after the reveal (the front ends allow it then): a view draws what the answers are about.
        A lab's: after a check ran, of what the learner's file (``files``: and its other files) and
        the lab's probe bind.
        """
        spec = ViewSpec(kind, of, optimizer)
        request = replace(request_for(drill, code, files), judged=False, check="", asks=(), views=(spec,))
        result = await self._run(request)
        status = RunStatus.read(result.status)
        obs = result.observation
        if not result.ok or obs is None:
            return ViewReport(module_id, drill.id, status, message=result.message)
        error = obs.error
        raised = describe_error(error) if error is not None else ""
        if error is not None and error.phase != "code":
            return ViewReport(module_id, drill.id, status, error=raised)
        return ViewReport(module_id, drill.id, status, view=obs.views[0] if obs.views else None, error=raised)

    async def open_lab_view(self, module_id: str, drill: Drill, kind: str, of: str, optimizer: str = "") -> ViewReport:
        """A lab's view: of what the learner's saved file (read here, as ``check_lab_file`` reads it) binds."""
        try:
            code, files, _stages = self._lab_inputs(module_id, drill)
        except ValueError as exc:
            return ViewReport(module_id, drill.id, RunStatus.REFUSED, message=str(exc))
        return await self.open_view(module_id, drill, code, kind, of, optimizer, files)

    def _lab_inputs(self, module_id: str, drill: Drill) -> tuple[str, dict[str, str], list[str]]:
        """The lab's saved file, its other files and earlier stages (``ValueError``: one cannot be read)."""
        if self.workspace is None:
            raise RuntimeError("this front end has no workspace for lab files")
        code = read_exercise(exercise_path(self.workspace, module_id, drill))
        files, stages = lab_files(self.workspace, module_id, drill)
        return code, files, stages

    def _record_prediction(self, module_id: str, drill: Drill, texts: dict[str, str], outcome: DrillOutcome,
                           seconds: float, confidence: int | None) -> tuple[Recorded | None, list[str]]:
        """A missed first try, or a try once the card is due, rates the drill's review card."""
        if self.session is None:
            return None, []
        correct = outcome.predictions_correct
        first_attempt = not self.session.attempted(module_id, drill.id)
        due = self.session.review.is_due(module_id, drill.id)
        review = due or (first_attempt and not correct)
        # whether this verdict rests on a prediction made before any observation of the drill was shown
        note = {"first_try": first_attempt, "review": due}
        seed = self.drafts.seed(module_id, drill.id)  # and which instance of a drill with variants it predicted
        note.update(instances.note(drill, seed if instances.seed_matches(drill, seed) else None))
        unlocked = self.session.record(
            Attempt(module=module_id, item=drill.id, kind=AttemptKind.PREDICTION, correct=correct, answers=texts,
                    observed=_observed(outcome), verdict={**_verdicts(outcome), ATTEMPT_NOTE: note},
                    seconds=seconds, confidence=confidence),
            review_kind="drill" if review else None, rating=rating_for(correct, confidence, seconds))
        return Recorded(AttemptKind.PREDICTION, correct, review), unlocked

    def _report(self, module_id: str, drill: Drill, kind: AttemptKind, verdict: Outcome, said: dict[str, str],
                outcome: DrillOutcome, recorded: Recorded | None = None, unlocked: list[str] = ()) -> RunReport:
        result = outcome.result
        finished = result.ok
        compiled = outcome.compile_error if finished else None  # named: it is the cause, said first
        not_recorded = ""
        if not finished:
            not_recorded = NOT_RECORDED_UNFINISHED
        elif self.session is None:
            not_recorded = NOT_RECORDED_OFF
        return RunReport(
            module_id, drill.id, kind, verdict, said=said, status=outcome.status,
            message=result.message if not finished else "",
            # a first-divergence drill's code runs are judged by their contracts (the check line), not its one ask
            rows=tuple(_row(a) for a in outcome.asks) if finished and not (
                drill.is_first_divergence and kind != AttemptKind.PREDICTION) else (),
            graded=kind == AttemptKind.PREDICTION,
            divergence=outcome.first_divergence() if finished and compiled is None else "",
            compile_error=describe_error(compiled) if compiled is not None else "",
            error=describe_error(outcome.error) if outcome.error is not None and compiled is None else "",
            check=outcome.check, check_message=outcome.check_message, fence=tuple(outcome.fence),
            tests=tuple(outcome.tests), submission_misconception=outcome.misconception,
            hints=labs.failing_hints(drill, outcome.tests) if outcome.tests else (),
            output=result.output, output_truncated=result.output_truncated,
            recorded=recorded, not_recorded=not_recorded, unlocked=self._refs(unlocked),
            drill_done=self._done(module_id, drill), trace=_trace(outcome) if finished else None,
            views=tuple(result.observation.views) if finished and result.observation else ())

    def _done(self, module_id: str, drill: Drill) -> bool:
        return self.session is not None and self.session.drill_done(module_id, drill.id)

    def _refs(self, module_ids) -> tuple[ModuleRef, ...]:
        if self.session is None:
            return ()
        return tuple(ModuleRef(m, slot.title if (slot := self.session.slot(m)) else m) for m in module_ids)

    async def trace(self, drill: Drill, code: str | None = None, until: int | None = None) -> TraceReport:
        """Run the drill's code (or ``code``) traced and return its rows; nothing is graded or recorded.

        The trace key of a front end (after the reveal, in experiment mode) and a first-divergence
        drill's ``{trace_until: N}`` hint (``until``: only the rows before the failing one) use this.
        """
        outcome = await self.observe(drill, code) if drill.is_first_divergence else None
        if outcome is None:
            result = await self._run(trace_request(drill, code))
            outcome = DrillOutcome(result)
        if not outcome.result.ok:
            return TraceReport((), problem=outcome.result.message)
        report = _trace(outcome) or TraceReport((), problem="the run was not traced")
        return report.upto(until) if until is not None else report


FRESH_INSTANCE_NEEDED = ("You have seen what PyTorch does for this instance of the drill, so predicting it again "
                         "proves nothing. Take a fresh instance (its shapes or values differ) and predict that one.")
RECALL_NEEDED = ("This drill is due for review: predict from memory what PyTorch will do. Type your answers "
                 "(an empty box, or one left as it was shown, is not a prediction); nothing was run or rated.")


def _nothing_recalled(drill: Drill, texts: Mapping[str, str], shown: Mapping[str, str]) -> bool:
    """No new prediction: a box empty, or every box as the screen showed it."""
    keys = [ask.key for ask in drill.asks]
    typed = {key: texts.get(key, "").strip() for key in keys}
    if any(not text for text in typed.values()):
        return True
    return all(typed[key] == shown.get(key, "").strip() for key in keys)


def _trace(outcome: DrillOutcome) -> TraceReport | None:
    observation = outcome.result.observation
    if observation is None or observation.trace is None:
        return None
    failures = outcome.contract_failures or ()
    return trace_report(observation.trace, failures[0] if failures else None, observation.error)


def _row(a) -> AskRow:
    verdict = a.verdict
    return AskRow(a.ask.key, a.ask.question, verdict.given if verdict and verdict.given else a.answer,
                  verdict.observed if verdict and verdict.observed else a.problem, a.correct,
                  verdict.misconception if verdict else "")


def _observed(outcome: DrillOutcome) -> dict:
    data: dict = {"status": str(outcome.status)}
    for a in outcome.asks:
        if a.verdict is not None:
            data[a.ask.key] = a.verdict.observed
    return data


def _verdicts(outcome: DrillOutcome) -> dict:
    return {
        a.ask.key: {
            "correct": a.correct,
            "divergence": a.verdict.divergence if a.verdict else a.problem,
            "misconception": a.verdict.misconception if a.verdict else "",
        }
        for a in outcome.asks
    }
