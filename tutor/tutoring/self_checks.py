"""The self-check and placement use cases of the tutoring service (:class:`TutoringService` has them).

A mixin so that the service stays one object for the front ends while its file stays small:
these use the service's ``session`` (None: recording off), ``observe`` (a placement question
on a drill runs its prediction in the sandbox), ``drafts`` and ``_refs``.
"""

from __future__ import annotations

import random
from typing import Mapping

from tutor.course.schema import SelfCheck
from tutor.grading import read_answers
from tutor.judge import AnswerError, option_label, parse_answer
from tutor.placement import PlacementQuestion, PlacementResult, decide, judge_choice, judge_prediction
from tutor.progress.review import SELF_RATINGS, rating_for
from tutor.progress.store import Attempt, AttemptKind
from tutor.session import SELF_CHECKS
from tutor.tutoring.reports import PlacementReport, PlacementRow, Recorded, SelfCheckReport

FREE_TEXT_EMPTY = "Write your answer first; then compare it with the model answer."


class SelfCheckUseCases:
    # ---------------------------------------------------------------- drafts: a long free-text answer
    # survives leaving the question, quitting and a lost terminal (kept under the module's
    # self-check position, one field per question), until it is answered

    def self_check_draft(self, module_id: str, check: SelfCheck) -> str:
        return self.drafts.answers(module_id, SELF_CHECKS).get(check.id, "")

    def keep_self_check_draft(self, module_id: str, check: SelfCheck, text: str) -> None:
        self.drafts.keep_answers(module_id, SELF_CHECKS, {check.id: text})

    # ---------------------------------------------------------------- multiple choice: the order shown

    def choice_order(self, module_id: str, check: SelfCheck) -> tuple[int, ...]:
        """The order a multiple-choice question's options are shown in (indices into ``check.options``).

        As written, except when the question is due for review: then each attempt shuffles them,
        seeded by the item and the attempt's number (so the screen and the judge agree, and the
        attempt records it), and the right option never keeps its written letter: a review is
        passed by knowing the answer, not by remembering where it was.
        """
        written = tuple(range(len(check.options)))
        if not check.is_choice or self.session is None or not self.session.review.is_due(module_id, check.id):
            return written
        order = list(written)
        random.Random(self._choice_seed(module_id, check)).shuffle(order)
        if len(order) > 1 and order.index(check.correct) == check.correct:
            order = order[1:] + order[:1]  # a rotation moves every option, the right one too
        return tuple(order)

    def shown_options(self, module_id: str, check: SelfCheck) -> tuple[str, ...]:
        return tuple(check.options[i] for i in self.choice_order(module_id, check))

    def _choice_seed(self, module_id: str, check: SelfCheck) -> str:
        tries = sum(1 for a in self.session.store.attempts(module_id) if a.item == check.id)
        return f"{module_id}/{check.id}/{tries + 1}"

    async def answer_self_check(self, module_id: str, check: SelfCheck, answer: str, seconds: float,
                                confidence: int | None = None) -> SelfCheckReport:
        """Judge a multiple-choice answer (a letter of the options as shown: see ``choice_order``), or take
        a free-text one for the learner to compare and rate."""
        order = self.choice_order(module_id, check)
        shuffled = order != tuple(range(len(order)))
        right = option_label(order.index(check.correct), check.options[check.correct]) if check.is_choice else ""
        if check.is_choice:
            try:
                chosen = order[parse_answer("choice", answer, self.shown_options(module_id, check))]
            except AnswerError as exc:
                return SelfCheckReport(module_id, check.id, answer, problem=str(exc))
            correct: bool | None = chosen == check.correct
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
                        answers={"answer": answer, **({"order": list(order)} if shuffled else {})},
                        verdict={"correct": correct, **({"seed": self._choice_seed(module_id, check)}
                                                        if shuffled else {})}, seconds=seconds,
                        confidence=confidence),
                review_kind="self_check" if review else None,
                rating=rating_for(bool(correct), confidence, seconds))
            recorded = Recorded(AttemptKind.SELF_CHECK, bool(correct), review)
            done = module_id in session.progress.done
        self.keep_self_check_draft(module_id, check, "")  # answered: nothing left to keep
        return SelfCheckReport(module_id, check.id, answer, correct=correct, right_answer=right,
                               model_answer=check.answer, points=check.points, needs_rating=correct is None, recorded=recorded,
                               unlocked=self._refs(unlocked), module_done=done)

    def rate_self_check(self, module_id: str, check: SelfCheck, self_rating: int, seconds: float = 0.0) -> bool:
        """The learner's own rating of a free-text answer (1..4); True when it rated the review card."""
        if self_rating not in SELF_RATINGS:
            raise ValueError("rate 1 (missed it) to 4 (easy)")
        if self.session is None or not self.session.reviewable(module_id, check.id):
            return False
        self.session.rate(module_id, check.id, "self_check", SELF_RATINGS[self_rating], seconds)
        return True

    async def answer_placement(self, question: PlacementQuestion, text: str | Mapping[str, str]) -> PlacementResult:
        """Judge one placement answer: a letter for a self-check, a prediction of every ask for a drill
        (``text``: the answers by ask key), run in the sandbox once.

        Raises AnswerError (with the message to show) when an answer cannot be read; nothing ran then.
        """
        if question.check is not None:
            return judge_choice(question, text, parse_answer("choice", text, question.check.options))
        drill = question.drill
        texts = dict(text) if isinstance(text, Mapping) else {question.asks[0].key: text}
        said = read_answers(drill, texts)
        for ask in question.asks:  # every ask is asked: an unanswered one is no answer
            if not said[ask.key].readable:
                raise AnswerError(f"{ask.question}: {said[ask.key].problem}" if len(question.asks) > 1
                                  else said[ask.key].problem)
        outcome = await self.observe(drill, None, said)
        graded = {a.ask.key: a for a in outcome.asks}
        return judge_prediction(question, texts, graded, "" if outcome.result.ok else outcome.result.message)

    async def take_placement(self, module_id: str, results: list[PlacementResult]) -> PlacementReport:
        """Score a placement, one decision per module: each module whose own questions pass, and whose
        prerequisites are done or tested out, is marked tested out (never done)."""
        right = sum(r.correct for r in results)
        score = right / len(results) if results else 0.0
        covered = tuple(dict.fromkeys(r.question.module for r in results))
        unlocked: list[str] = []
        if self.session is not None:
            order, needs, met = self.session.placement_needs()
            decision = decide(results, order, needs, met)
            asked = [r.question.key for r in results]  # a retry draws other questions
            attempt_no = self.session.placement_tries(module_id) + 1
            for ancestor in covered:
                own = [r for r in results if r.question.module == ancestor]
                unlocked += self.session.record(Attempt(
                    module=ancestor, item="placement", kind=AttemptKind.PLACEMENT,
                    correct=ancestor in decision.marked,
                    answers={r.question.key: r.answer for r in own},
                    verdict={"for": module_id, "score": round(score, 3), "asked": asked, "try": attempt_no,
                             "own": [sum(r.correct for r in own), len(own)],
                             "held_back": ancestor in decision.held_back}))
            opened = self.session.can_open(module_id)
        else:  # recording off: the decision as it would be on an empty profile
            decision = decide(results, list(covered), {}, set())
            opened = not decision.failed and not decision.held_back
        rows = tuple(PlacementRow(r.question.module, _placement_question(r.question), r.answer, r.correct,
                                  r.right_answer, r.why) for r in results)
        return PlacementReport(module_id, right, len(results), opened, decision.marked,
                               self._refs(sorted(set(unlocked))), rows, failed=decision.failed,
                               held_back=decision.held_back)


def _placement_question(question: PlacementQuestion) -> str:
    if question.check is not None:
        return question.check.question
    return f"{question.drill.prompt.strip()} — " + " / ".join(ask.question for ask in question.asks)
