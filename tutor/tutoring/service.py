"""The tutoring service: every learner action, end to end, for every front end.

Each use case reads what the learner said (once), runs it in the sandbox, grades
it, decides what the profile records (and whether a spaced-review card is rated),
and returns a report (:mod:`tutor.tutoring.reports`). The TUI, plain mode and
``pytorch-tutor check`` (with recording off) all call this; none of them wires
parse -> run -> grade -> record -> unlock itself. No Textual here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Protocol

from tutor.course.schema import Drill, SelfCheck
from tutor.grading import DrillOutcome, describe_error, grade_read, read_answers, request_for, trace_request
from tutor.judge import AnswerError, ReadAnswer, labs, option_label, parse_answer
from tutor.progress.review import SELF_RATINGS, rating_for
from tutor.progress.store import Attempt, AttemptKind
from tutor.sandbox.client import RunResult
from tutor.sandbox.wire import RunRequest, TraceSpec, ViewSpec
from tutor.placement import PlacementQuestion, PlacementResult, judge_choice, judge_prediction
from tutor.placement import passed as placement_passed
from tutor.session import Session
from tutor.tutoring.reports import (NOT_RECORDED_FILE, NOT_RECORDED_OFF, NOT_RECORDED_UNFINISHED,
                                    NOT_RECORDED_UNREADABLE, AskRow, ModuleRef, PlacementReport, PlacementRow,
                                    Recorded, RunReport, SelfCheckReport, SnippetReport, ViewReport)
from tutor.safe_text import inert
from tutor.tutoring.drafts import Drafts
from tutor.tutoring.states import Outcome, RunStatus
from tutor.tutoring.trace_view import TraceReport, trace_report
from tutor.value_text import describe_briefly
from tutor.workspace import Workspace, exercise_path, lab_files, read_exercise

FREE_TEXT_EMPTY = "Write your answer first; then compare it with the model answer."


class SandboxPort(Protocol):
    """What the service needs from a sandbox (the real one, or a test's fake)."""

    async def start(self) -> None: ...

    async def run(self, request: RunRequest) -> RunResult: ...

    async def close(self) -> None: ...


class TutoringService:
    """One learner's actions on one course; ``session=None`` turns recording off (an author's check).

    ``workspace``: the learner's lab files for this course (a front end with labs passes it).
    """

    def __init__(self, session: Session | None, sandbox: SandboxPort, workspace: Workspace | None = None):
        self.session = session
        self.sandbox = sandbox
        self.workspace = workspace
        self.drafts = Drafts(session.store if session is not None else None)

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
        result = await self.sandbox.run(request_for(drill, code, files))
        return grade_read(drill, said or read_answers(drill, {}), result)

    async def run_snippet(self, code: str, timeout: float, source: str = "",
                          trace_function: str | None = None, views: tuple[ViewSpec, ...] = ()) -> SnippetReport:
        """Run any snippet once (``pytorch-tutor run``): what it printed, bound, raised and broke.

        ``trace_function`` not None: traced too (``run --trace``), inside that function when it names one.
        ``views``: views of names it bound (``run --view graph loss``), made after it ran.
        """
        trace = TraceSpec(function=trace_function) if trace_function is not None else None
        result = await self.sandbox.run(RunRequest(code=code, timeout=timeout, trace=trace, views=views))
        obs = result.observation
        base = dict(source=source, status=RunStatus.read(result.status), seconds=result.seconds,
                    output=result.output, output_truncated=result.output_truncated)
        if obs is None or not result.ok:
            return SnippetReport(message=result.message, **base)
        return SnippetReport(
            variables=tuple((inert(name), describe_briefly(value)) for name, value in obs.variables.items()),
            error=describe_error(obs.error) if obs.error else "", error_type=inert(obs.error.type) if obs.error else "",
            fence=tuple(obs.fence), trace=trace_report(obs.trace), views=tuple(obs.views), **base)

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
        if self.session is None:
            return {}
        said = [a for a in self.session.store.attempts(module_id)
                if a.item == drill.id and a.kind == AttemptKind.PREDICTION]
        return {key: str(value) for key, value in said[-1].answers.items()} if said else {}

    def last_verified(self, module_id: str, drill: Drill) -> RunReport | None:
        """A verified drill revisited: the prediction that verified it, beside what was observed then."""
        if self.session is None or not self.session.drill_done(module_id, drill.id):
            return None
        right = [a for a in self.session.store.attempts(module_id)
                 if a.item == drill.id and a.kind == AttemptKind.PREDICTION and a.correct]
        if not right:
            return None
        last = right[-1]
        rows = tuple(AskRow(ask.key, ask.question, str(last.answers.get(ask.key, "")),
                            str(last.observed.get(ask.key, "")), True) for ask in drill.asks)
        return RunReport(module_id, drill.id, AttemptKind.PREDICTION, Outcome.VERIFIED, said=dict(last.answers),
                         status=RunStatus.OK, rows=rows, drill_done=True)

    async def submit_prediction(self, module_id: str, drill: Drill, said: Mapping[str, ReadAnswer],
                                seconds: float, confidence: int | None = None) -> RunReport:
        """Predict, then observe: the drill is verified when every prediction matches."""
        problems = {key: a.problem for key, a in said.items() if not a.readable}
        texts = {key: a.text for key, a in said.items()}
        if problems:
            return RunReport(module_id, drill.id, AttemptKind.PREDICTION, Outcome.UNREADABLE, said=texts,
                             problems=problems, not_recorded=NOT_RECORDED_UNREADABLE,
                             drill_done=self._done(module_id, drill))
        outcome = await self.observe(drill, None, said)
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
        result = await self.sandbox.run(request)
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
        review = self.session.review.is_due(module_id, drill.id) or (first_attempt and not correct)
        unlocked = self.session.record(
            Attempt(module=module_id, item=drill.id, kind=AttemptKind.PREDICTION, correct=correct, answers=texts,
                    observed=_observed(outcome), verdict=_verdicts(outcome), seconds=seconds,
                    confidence=confidence),
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
            result = await self.sandbox.run(trace_request(drill, code))
            outcome = DrillOutcome(result)
        if not outcome.result.ok:
            return TraceReport((), problem=outcome.result.message)
        report = _trace(outcome) or TraceReport((), problem="the run was not traced")
        return report.upto(until) if until is not None else report

    # ---------------------------------------------------------------- self-check and placement

    async def answer_self_check(self, module_id: str, check: SelfCheck, answer: str, seconds: float,
                                confidence: int | None = None) -> SelfCheckReport:
        """Judge a multiple-choice answer, or take a free-text one for the learner to compare and rate."""
        right = option_label(check.correct, check.options[check.correct]) if check.is_choice else ""
        if check.is_choice:
            try:
                correct: bool | None = parse_answer("choice", answer, check.options) == check.correct
            except AnswerError as exc:
                return SelfCheckReport(module_id, check.id, answer, problem=str(exc))
        elif not answer.strip():
            return SelfCheckReport(module_id, check.id, answer, problem=FREE_TEXT_EMPTY)
        else:
            correct = None
        recorded, unlocked, done = None, [], False
        if self.session is not None:
            session = self.session
            review = correct is not None and session.reviewable(module_id, check.id)
            unlocked = session.record(
                Attempt(module=module_id, item=check.id, kind=AttemptKind.SELF_CHECK, correct=bool(correct),
                        answers={"answer": answer}, verdict={"correct": correct}, seconds=seconds,
                        confidence=confidence),
                review_kind="self_check" if review else None,
                rating=rating_for(bool(correct), confidence, seconds))
            recorded = Recorded(AttemptKind.SELF_CHECK, bool(correct), review)
            done = module_id in session.progress.done
        return SelfCheckReport(module_id, check.id, answer, correct=correct, right_answer=right,
                               model_answer=check.answer, needs_rating=correct is None, recorded=recorded,
                               unlocked=self._refs(unlocked), module_done=done)

    def rate_self_check(self, module_id: str, check: SelfCheck, self_rating: int, seconds: float = 0.0) -> bool:
        """The learner's own rating of a free-text answer (1..4); True when it rated the review card."""
        if self_rating not in SELF_RATINGS:
            raise ValueError("rate 1 (missed it) to 4 (easy)")
        if self.session is None or not self.session.reviewable(module_id, check.id):
            return False
        self.session.rate(module_id, check.id, "self_check", SELF_RATINGS[self_rating], seconds)
        return True

    async def answer_placement(self, question: PlacementQuestion, text: str) -> PlacementResult:
        """Judge one placement answer: a letter for a self-check, a prediction run in the sandbox for a drill.

        Raises AnswerError (with the message to show) when the answer cannot be read; nothing ran then.
        """
        if question.check is not None:
            return judge_choice(question, text, parse_answer("choice", text, question.check.options))
        drill, ask = question.drill, question.ask
        said = read_answers(drill, {ask.key: text})
        if not said[ask.key].readable:
            raise AnswerError(said[ask.key].problem)
        outcome = await self.observe(drill, None, said)
        graded = next((a for a in outcome.asks if a.ask.key == ask.key), None)
        return judge_prediction(question, text, graded, "" if outcome.result.ok else outcome.result.message)

    async def take_placement(self, module_id: str, results: list[PlacementResult]) -> PlacementReport:
        """Score a placement; passing marks the prerequisites it covered as tested out (never done)."""
        right = sum(r.correct for r in results)
        score = right / len(results) if results else 0.0
        passed = placement_passed(results)
        covered = tuple(sorted({r.question.module for r in results}))
        unlocked: list[str] = []
        if self.session is not None:
            asked = [r.question.key for r in results]  # a retry draws other questions
            attempt_no = self.session.placement_tries(module_id) + 1
            for ancestor in covered:
                unlocked += self.session.record(Attempt(
                    module=ancestor, item="placement", kind=AttemptKind.PLACEMENT, correct=passed,
                    answers={r.question.key: r.answer for r in results if r.question.module == ancestor},
                    verdict={"for": module_id, "score": round(score, 3), "asked": asked, "try": attempt_no}))
        rows = tuple(PlacementRow(r.question.module, _placement_question(r.question), r.answer, r.correct,
                                  r.right_answer, r.why) for r in results)
        return PlacementReport(module_id, right, len(results), passed, covered if passed else (),
                               self._refs(sorted(set(unlocked))), rows)


def _trace(outcome: DrillOutcome) -> TraceReport | None:
    observation = outcome.result.observation
    if observation is None or observation.trace is None:
        return None
    failures = outcome.contract_failures or ()
    return trace_report(observation.trace, failures[0] if failures else None)


def _placement_question(question: PlacementQuestion) -> str:
    if question.check is not None:
        return question.check.question
    return f"{question.drill.prompt.strip()} — {question.ask.question}"


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
