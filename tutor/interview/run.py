"""One interview in progress: its clock, the question asked now, each answer judged and recorded.

Every answer is judged exactly as practice judges it (a prediction and a triage by the sandbox's
observation, a repair by its check in the judge's process, a multiple choice by its option, a free
text by the learner's own rating against the model answer and its rubric) and recorded as an
``interview`` attempt (``AttemptKind.INTERVIEW``), whose note names the interview and the kind of
question: the learner model (``tutor.progress.mastery``) learns from it as from practice, the
progress summary never counts it as a drill verified, and stats tell the two apart. A miss puts the
item's review card due again (``Rating.Again``: back in the review queue within hours).

Time is visible and soft: an answer after its question's limit still counts; the debrief says it ran over.
"""

from __future__ import annotations

import random
import secrets
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable, Mapping

from tutor.course.schema import Drill
from tutor.course.variants import present_drill_instance
from tutor.interview.plan import KIND_WORDS, LIMIT_SECONDS, Candidate, QuestionKind, Scope, Selector, candidates
from tutor.judge import AnswerError, option_label, parse_answer
from tutor.placement import PlacementQuestion, judge_prediction
from tutor.progress.review import SELF_RATINGS, rating_for
from tutor.progress.store import ATTEMPT_NOTE, Attempt, AttemptKind
from tutor.tutoring import instances

if TYPE_CHECKING:
    from tutor.tutoring.service import TutoringService

RIGHT_RATING = 3  # a free-text answer rated "got it" (3) or "easy" (4) counts as right; "partly" does not


@dataclass(frozen=True)
class Question:
    number: int  # 1, 2, … in this interview
    candidate: Candidate
    drill: Drill | None  # the instance asked (a fresh one where the drill varies)
    limit: int  # seconds: soft
    started: float  # the interview clock's reading when it was asked

    @property
    def kind(self) -> QuestionKind:
        return self.candidate.kind

    @property
    def module(self) -> str:
        return self.candidate.module

    @property
    def check(self):
        return self.candidate.check

    @property
    def words(self) -> str:
        return KIND_WORDS[self.kind]


@dataclass(frozen=True)
class Answered:
    question: Question
    said: str
    correct: bool | None  # None: not judged (the run did not finish), or a free text awaiting its rating
    seconds: float
    right_answer: str = ""  # what PyTorch observed, the right option, the reference repair
    why: str = ""  # the divergence, the check's message, the misconception
    misconceptions: tuple[str, ...] = ()
    confidence: int | None = None
    model_answer: str = ""  # a free text's model answer and rubric, after the answer
    points: tuple[str, ...] = ()
    explanation: str = ""  # the drill's mechanism, after the answer
    not_judged: str = ""  # why nothing was judged (the sandbox could not finish the run): not scored

    @property
    def over_limit(self) -> bool:
        return self.seconds > self.question.limit

    @property
    def needs_rating(self) -> bool:
        return self.question.kind is QuestionKind.EXPLAIN and self.correct is None and not self.not_judged


class Interview:
    """A mock interview over ``scope``, ``minutes`` long; ``clock`` (seconds) is injectable for tests."""

    def __init__(self, service: TutoringService, scope: Scope, minutes: int,
                 clock: Callable[[], float] = time.monotonic, seed: int | None = None):
        if service.session is None:
            raise ValueError("an interview is recorded: it needs a learner's session")
        self.service = service
        self.session = service.session
        self.scope = scope
        self.minutes = minutes
        self.clock = clock
        self.id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(2)
        self._rng = random.Random(seed)
        modules = [m for module_id in scope.modules if (m := self.session.module(module_id)) is not None]
        self.selector = Selector(candidates(modules), self._rng)
        self.started = clock()
        self.current: Question | None = None
        self.answers: list[Answered] = []
        self._pending: Answered | None = None  # a free-text answer shown its model answer, awaiting its rating

    # ---------------------------------------------------------------- time

    @property
    def elapsed(self) -> float:
        return self.clock() - self.started

    @property
    def remaining(self) -> float:
        return max(0.0, self.minutes * 60 - self.elapsed)

    def time_line(self) -> str:
        """The clock as a front end shows it: the interview's time left, and the question's own."""
        left = int(self.remaining)
        line = f"{left // 60}:{left % 60:02d} left of {self.minutes} min"
        if self.current is not None:
            spent = int(self.clock() - self.current.started)
            over = " (over: it still counts)" if spent > self.current.limit else ""
            line += f" · this question {spent // 60}:{spent % 60:02d} of {self.current.limit // 60}:00{over}"
        return line

    # ---------------------------------------------------------------- questions

    def next_question(self) -> Question | None:
        """The next question; None when time is up or the scope has no question left (the interview is over).
        The question being answered is never cut off: this is asked for only after an answer."""
        if self.remaining <= 0:
            self.current = None
            return None
        chosen = self.selector.next()
        if chosen is None:
            self.current = None
            return None
        drill = self._instance(chosen) if chosen.drill is not None else None
        self.current = Question(len(self.answers) + 1, chosen, drill, LIMIT_SECONDS[chosen.kind], self.clock())
        return self.current

    def _instance(self, chosen: Candidate) -> Drill:
        drill = chosen.drill
        if drill.variants is None:
            return drill
        seen = instances.answered(a for a in self.session.store.attempts(chosen.module) if a.item == drill.id)
        return present_drill_instance(drill, instances.fresh_seed(drill, seen))  # one the learner never saw answered

    # ---------------------------------------------------------------- answers

    async def answer_prediction(self, texts: Mapping[str, str], confidence: int | None = None) -> Answered:
        """A prediction or a triage: every ask answered (AnswerError names an unreadable one; nothing ran)."""
        question = self._asked(QuestionKind.PREDICT, QuestionKind.TRIAGE)
        drill = question.drill
        said = self.service.read_answers(drill, texts)
        for ask in drill.asks:
            if not said[ask.key].readable:
                raise AnswerError(f"{ask.question}: {said[ask.key].problem}" if len(drill.asks) > 1
                                  else said[ask.key].problem)
        seconds = self._seconds(question)
        outcome = await self.service.observe(drill, None, said)
        shown = "; ".join(texts.get(ask.key, "") for ask in drill.asks)
        if not outcome.result.ok:
            return self._keep(Answered(question, shown, None, seconds, not_judged=outcome.result.message,
                                       confidence=confidence))
        graded = {a.ask.key: a for a in outcome.asks}
        judged = judge_prediction(PlacementQuestion(question.module, drill=drill, asks=tuple(drill.asks)),
                                  texts, graded, "")
        misconceptions = tuple(a.verdict.misconception for a in outcome.asks
                               if a.verdict is not None and not a.verdict.correct and a.verdict.misconception)
        answered = Answered(question, shown, judged.correct, seconds, judged.right_answer, judged.why, misconceptions,
                            confidence, explanation=drill.explanation)
        verdicts = {a.ask.key: {"correct": a.correct, "misconception": a.verdict.misconception if a.verdict else "",
                                "divergence": a.verdict.divergence if a.verdict else a.problem} for a in outcome.asks}
        observed = {a.ask.key: a.verdict.observed for a in outcome.asks if a.verdict is not None}
        self._record(answered, {key: texts.get(key, "") for key in (a.key for a in drill.asks)}, observed, verdicts,
                     instances.note(drill, None))
        return self._keep(answered)

    async def answer_repair(self, code: str) -> Answered:
        """A repair: right when the code runs cleanly and the drill's check passes (judged as practice judges it)."""
        question = self._asked(QuestionKind.REPAIR)
        drill = question.drill
        if not code.strip():
            raise AnswerError("Write the repaired code first (the drill's code, changed).")
        seconds = self._seconds(question)
        outcome = await self.service.observe(drill, code)
        if not outcome.result.ok:
            return self._keep(Answered(question, code, None, seconds, not_judged=outcome.result.message))
        passed = outcome.code_passes
        why = "" if passed else (outcome.check_message or (outcome.error.message if outcome.error else "")
                                 or "the check did not pass")
        answered = Answered(question, code, passed, seconds, right_answer=drill.solution, why=why,
                            explanation=drill.explanation)
        self._record(answered, {"code": code}, {"status": str(outcome.status)}, {"check": str(outcome.check)})
        return self._keep(answered)

    def answer_choice(self, text: str, confidence: int | None = None) -> Answered:
        """A multiple-choice self-check (AnswerError: not one of the letters)."""
        question = self._asked(QuestionKind.CHOICE)
        check = question.check
        chosen = parse_answer("choice", text, check.options)
        seconds = self._seconds(question)
        right = option_label(check.correct, check.options[check.correct])
        answered = Answered(question, option_label(chosen, check.options[chosen]), chosen == check.correct, seconds,
                            right_answer=right, confidence=confidence, model_answer=check.answer)
        self._record(answered, {"answer": text}, {}, {"correct": answered.correct})
        return self._keep(answered)

    def answer_explain(self, text: str) -> Answered:
        """A free-text answer: the model answer and its rubric come back; ``rate`` scores it."""
        question = self._asked(QuestionKind.EXPLAIN)
        if not text.strip():
            raise AnswerError("Write your answer first; then compare it with the model answer.")
        answered = Answered(question, text, None, self._seconds(question), model_answer=question.check.answer,
                            points=question.check.points)
        self._pending = answered
        return answered

    def rate(self, rating: int) -> Answered:
        """The learner's rating of their free-text answer against the model answer (1 missed it .. 4 easy)."""
        if rating not in SELF_RATINGS:
            raise ValueError("rate 1 (missed it) to 4 (easy)")
        pending = self._pending
        if pending is None:
            raise ValueError("there is no free-text answer to rate")
        self._pending = None
        answered = replace(pending, correct=rating >= RIGHT_RATING)
        self._record(answered, {"answer": answered.said, "rating": rating}, {}, {"correct": answered.correct,
                                                                                 "rating": rating})
        return self._keep(answered)

    # ---------------------------------------------------------------- books

    def _asked(self, *kinds: QuestionKind) -> Question:
        question = self.current
        if question is None or question.kind not in kinds:
            raise ValueError(f"no {'/'.join(kinds)} question is being asked")
        return question

    def _seconds(self, question: Question) -> float:
        return max(0.0, self.clock() - question.started)

    def _keep(self, answered: Answered) -> Answered:
        self.answers.append(answered)
        if answered.correct is not None:
            self.selector.answered(answered.correct)
        self.current = None
        return answered

    def _record(self, answered: Answered, answers: dict, observed: dict, verdict: dict, extra: dict | None = None) -> None:
        question = answered.question
        note = {"interview": self.id, "as": question.kind.value, "number": question.number, "limit": question.limit,
                "minutes": self.minutes, "scope": self.scope.key, "level": question.candidate.level, **(extra or {})}
        review_kind = "drill" if question.drill is not None else "self_check"
        module, item = question.module, question.candidate.item
        due = self.session.review.is_due(module, item)
        rate = not answered.correct or due  # a miss comes back in review; a right answer rates only a due card
        self.session.record(
            Attempt(module=module, item=item, kind=AttemptKind.INTERVIEW, correct=bool(answered.correct),
                    answers=answers, observed=observed, verdict={**verdict, ATTEMPT_NOTE: note},
                    seconds=answered.seconds, confidence=answered.confidence),
            review_kind=review_kind if rate else None,
            rating=rating_for(bool(answered.correct), answered.confidence, answered.seconds) if rate else None)


def note_of(attempt: Attempt) -> dict:
    """An interview attempt's note (which interview, which kind of question); {} for any other attempt."""
    note = attempt.verdict.get(ATTEMPT_NOTE) if attempt.kind == AttemptKind.INTERVIEW else None
    return note if isinstance(note, dict) and isinstance(note.get("interview"), str) else {}
