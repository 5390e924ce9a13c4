"""The judge: read a learner's answer, compare it with what the sandbox observed.

Data flows one way: a typed answer and an observation go in, a :class:`Verdict`
comes out. The judge never runs code and never trusts the snippet's own verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from tutor.judge.compare import compare, render
from tutor.judge.kinds import KINDS, expected_form
from tutor.judge.observed import NotObservable, observed_value
from tutor.judge.parsers import AnswerError, parse_answer


@dataclass(frozen=True)
class Verdict:
    correct: bool
    given: str  # the prediction as understood, in canonical spelling ("" if unreadable)
    observed: str  # the observation in the same spelling
    divergence: str = ""  # the first place prediction and observation part ways
    misconception: str = ""  # when the answer matches a listed wrong answer
    problem: str = ""  # the answer could not be read, or the value could not be observed

    @property
    def readable(self) -> bool:
        return not self.problem


def judge(ask: Any, answer: str, described: Any, wrong_answers: Iterable[Any] = ()) -> Verdict:
    """Judge ``answer`` to ``ask`` against the sandbox's description of the value.

    ``ask`` needs ``kind``, ``options``, ``tolerance`` and ``key``; wrong answers
    need ``ask``, ``answer`` and ``misconception`` (see :mod:`tutor.course.schema`).
    """
    try:
        observed = observed_value(ask.kind, described, ask.options)
    except NotObservable as exc:
        return Verdict(False, "", "", problem=f"this drill's value cannot be shown as {ask.kind}: {exc}")
    observed_text = render(ask.kind, observed, ask.options)
    try:
        predicted = parse_answer(ask.kind, answer, ask.options)
    except AnswerError as exc:
        return Verdict(False, "", observed_text, problem=str(exc))
    divergence = compare(ask.kind, predicted, observed, ask.tolerance, ask.options)
    misconception = ""
    if divergence:
        misconception = matching_misconception(ask, predicted, wrong_answers)
    return Verdict(divergence is None, render(ask.kind, predicted, ask.options), observed_text,
                   divergence or "", misconception)


def matching_misconception(ask: Any, predicted: Any, wrong_answers: Iterable[Any]) -> str:
    """The misconception of the first listed wrong answer equal to ``predicted``."""
    for wrong in wrong_answers:
        if wrong.ask != ask.key:
            continue
        try:
            listed = parse_answer(ask.kind, wrong.answer, ask.options)
        except AnswerError:
            continue
        if compare(ask.kind, predicted, listed, ask.tolerance, ask.options) is None:
            return wrong.misconception
    return ""


__all__ = ["KINDS", "AnswerError", "Verdict", "expected_form", "judge", "matching_misconception", "parse_answer"]
