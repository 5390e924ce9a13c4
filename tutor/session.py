"""A learner's session: the course, their profile, and what happens next.

This is the app's model, free of Textual so that other front ends (and tests)
drive exactly the same rules: which modules open, when a drill counts as
verified, what is recorded for each attempt, where a relaunch resumes.
"""

from __future__ import annotations

from dataclasses import dataclass

from tutor.course.graph import ModuleState, Status
from tutor.course.loader import Course, ModuleSlot
from tutor.course.schema import Drill, Module, SelfCheck
from tutor.grading import DrillOutcome
from tutor.judge import AnswerError, parse_answer
from tutor.progress.store import Attempt, ProfileStore
from tutor.progress.summary import CourseProgress, summarise
from tutor.review import SELF_RATINGS, Clock, ReviewQueue, rating_for, utc_now

SELF_CHECKS = "self-check"  # the position item for a module's self-check questions

OPENABLE = (Status.OPEN, Status.IN_PROGRESS, Status.DONE)
PLACEMENT_PER_MODULE = 2
PLACEMENT_MAX = 12
PLACEMENT_PASS = 0.8


@dataclass(frozen=True)
class SelfCheckResult:
    correct: bool | None  # None for free-text questions: the learner compares with the model answer
    problem: str = ""  # a multiple-choice answer that could not be read


class Session:
    def __init__(self, course: Course, store: ProfileStore, clock: Clock = utc_now):
        self.course = course
        self.store = store
        store.use_course(course.identity)  # this course's progress only: a profile holds several
        self.review = ReviewQueue(store, clock)
        self._progress: CourseProgress | None = None

    # ---------------------------------------------------------------- reading

    @property
    def progress(self) -> CourseProgress:
        if self._progress is None:
            self._progress = summarise(self.course, self.store.attempts(), self.store.position())
        return self._progress

    def state(self, module_id: str) -> ModuleState:
        return self.progress.states[module_id]

    def can_open(self, module_id: str) -> bool:
        return self.state(module_id).status in OPENABLE

    def slot(self, module_id: str) -> ModuleSlot | None:
        return self.course.slot(module_id)

    def module(self, module_id: str) -> Module | None:
        slot = self.course.slot(module_id)
        return slot.module if slot else None

    def drill_done(self, module_id: str, drill_id: str) -> bool:
        return drill_id in self.progress.of(module_id).drills_done

    def predicted(self, module_id: str, drill_id: str) -> bool:
        return drill_id in self.progress.of(module_id).predicted

    def self_check_answered(self, module_id: str, check_id: str) -> bool:
        return check_id in self.progress.of(module_id).self_checks_answered

    def resume_point(self) -> tuple[str, str] | None:
        """Where the learner left off, if that module can still be opened."""
        position = self.store.position()
        if position is None:
            return None
        module_id, item = position
        module = self.module(module_id)
        if module is None or not self.can_open(module_id):
            return None
        if item != SELF_CHECKS and module.drill(item) is None:
            return None
        return position

    def entry_point(self, module_id: str) -> str:
        """Where opening a module lands: the first unfinished drill, else the self-check."""
        module = self.module(module_id)
        assert module is not None
        for drill in module.drills:
            if not self.drill_done(module_id, drill.id):
                return drill.id
        if module.self_checks and not all(self.self_check_answered(module_id, c.id) for c in module.self_checks):
            return SELF_CHECKS
        return module.drills[0].id

    def next_after(self, module_id: str, drill_id: str) -> str | None:
        """The drill after ``drill_id``, the self-check after the last drill, or None."""
        module = self.module(module_id)
        assert module is not None
        ids = [d.id for d in module.drills]
        index = ids.index(drill_id)
        if index + 1 < len(ids):
            return ids[index + 1]
        return SELF_CHECKS if module.self_checks else None

    def previous_before(self, module_id: str, drill_id: str) -> str | None:
        module = self.module(module_id)
        assert module is not None
        ids = [d.id for d in module.drills]
        index = ids.index(drill_id)
        return ids[index - 1] if index > 0 else None

    # ---------------------------------------------------------------- writing

    def _changed(self) -> None:
        self._progress = None

    def visit(self, module_id: str, item: str) -> None:
        self.store.set_position(module_id, item)
        self._changed()

    def record_prediction(self, module_id: str, drill: Drill, answers: dict[str, str], outcome: DrillOutcome,
                          seconds: float, confidence: int | None = None) -> list[str]:
        """Record a graded prediction; return the modules this newly unlocked."""
        before = self._locked()
        first_attempt = drill.id not in self.progress.of(module_id).attempted
        correct = outcome.predictions_correct
        if self.review.is_due(module_id, drill.id) or (first_attempt and not correct):
            self.review.review(module_id, drill.id, "drill", rating_for(correct, confidence, seconds), seconds)
        self.store.record(Attempt(
            module=module_id, item=drill.id, kind="prediction", correct=outcome.predictions_correct,
            answers=answers, observed=_observed(outcome), verdict=_verdicts(outcome), seconds=seconds,
            confidence=confidence,
        ))
        return self._newly_unlocked(before)

    def record_code_run(self, module_id: str, drill: Drill, code: str, outcome: DrillOutcome, seconds: float,
                        kind: str) -> list[str]:
        """Record an experiment, repair or exercise run (correct when the check passes cleanly)."""
        before = self._locked()
        correct = code_run_passed(outcome)
        self.store.record(Attempt(
            module=module_id, item=drill.id, kind=kind, correct=correct,
            answers={"code": code}, observed=_observed(outcome), verdict={"check": outcome.check}, seconds=seconds,
        ))
        return self._newly_unlocked(before)

    def answer_self_check(self, module_id: str, check: SelfCheck, answer: str, seconds: float,
                          confidence: int | None = None) -> tuple[SelfCheckResult, list[str]]:
        """Judge (multiple choice) or just record (free text) a self-check answer.

        Returns the result and the modules this newly unlocked.
        """
        if check.is_choice:
            try:
                chosen = parse_answer("choice", answer, check.options)
            except AnswerError as exc:
                return SelfCheckResult(None, str(exc)), []
            result = SelfCheckResult(chosen == check.correct)
        else:
            if not answer.strip():
                return SelfCheckResult(None, "Write your answer first; then compare it with the model answer."), []
            result = SelfCheckResult(None)
        before = self._locked()
        if result.correct is not None and self._reviewable(module_id, check.id):
            self.review.review(module_id, check.id, "self_check", rating_for(result.correct, confidence, seconds),
                               seconds)
        self.store.record(Attempt(
            module=module_id, item=check.id, kind="self_check", correct=bool(result.correct),
            answers={"answer": answer}, verdict={"correct": result.correct}, seconds=seconds,
            confidence=confidence,
        ))
        return result, self._newly_unlocked(before)

    def rate_self_check(self, module_id: str, check: SelfCheck, self_rating: int, seconds: float = 0.0) -> None:
        """The learner's own rating of a free-text answer, after reading the model answer (1..4)."""
        if self_rating not in SELF_RATINGS:
            raise ValueError("rate 1 (missed it) to 4 (easy)")
        if self._reviewable(module_id, check.id):
            self.review.review(module_id, check.id, "self_check", SELF_RATINGS[self_rating], seconds)

    def _reviewable(self, module_id: str, item: str) -> bool:
        """A card is created on first sight, then rated only when it falls due (retries don't count)."""
        return self.review.card(module_id, item) is None or self.review.is_due(module_id, item)

    # ---------------------------------------------------------------- test-out

    def placement_set(self, module_id: str) -> list[tuple[str, SelfCheck]]:
        """Multiple-choice questions from the unfinished written modules this one depends on."""
        missing = self._missing_ancestors(module_id)
        questions: list[tuple[str, SelfCheck]] = []
        for ancestor in reversed(missing):  # nearest prerequisites first
            module = self.module(ancestor)
            if module is None:
                continue
            choices = [c for c in module.self_checks if c.is_choice][:PLACEMENT_PER_MODULE]
            questions.extend((ancestor, c) for c in choices)
        return questions[:PLACEMENT_MAX]

    def _missing_ancestors(self, module_id: str) -> list[str]:
        """Written, unfinished modules this one needs, directly or through others, in course order."""
        slots = {s.id: s for s in self.course.slots}
        seen: set[str] = set()
        stack = list(slots[module_id].requires)
        while stack:
            req = stack.pop()
            if req in seen or req not in slots:
                continue
            seen.add(req)
            stack.extend(slots[req].requires)
        done = self.progress.done
        return [s.id for s in self.course.slots if s.id in seen and not s.is_coming and s.id not in done]

    def record_placement(self, module_id: str, answers: list[tuple[str, SelfCheck, bool]]) -> tuple[bool, list[str]]:
        """Score a placement set; passing marks the prerequisites it covered as tested out."""
        before = self._locked()
        score = sum(ok for _, _, ok in answers) / len(answers) if answers else 0.0
        passed = score >= PLACEMENT_PASS
        for ancestor in sorted({m for m, _, _ in answers}):
            self.store.record(Attempt(module=ancestor, item="placement", kind="placement", correct=passed,
                                      verdict={"for": module_id, "score": round(score, 3)}))
        return passed, self._newly_unlocked(before)

    def _locked(self) -> set[str]:
        return {m for m, state in self.progress.states.items() if state.status == Status.LOCKED}

    def _newly_unlocked(self, locked_before: set[str]) -> list[str]:
        self._changed()
        return sorted(m for m in locked_before if self.progress.states[m].status in OPENABLE)


def code_run_passed(outcome: DrillOutcome) -> bool:
    """Edited code counts as repaired or solved when it runs cleanly and its check passes."""
    if not (outcome.result.ok and not outcome.fence and outcome.error is None):
        return False
    return all(t.passed for t in outcome.tests) if outcome.tests else outcome.check == "passed"


def _observed(outcome: DrillOutcome) -> dict:
    data: dict = {"status": outcome.result.status}
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
