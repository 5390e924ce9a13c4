"""The judge: read a learner's answer, compare it with what the sandbox observed.

Data flows one way: a typed answer and an observation go in, a :class:`Verdict`
comes out. The judge never runs code and never trusts the snippet's own verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from tutor.judge.compare import compare, render
from tutor.judge.kinds import KINDS, expected_form, option_label, option_letter
from tutor.judge.near_miss import near_miss
from tutor.judge.observed import NotObservable, observed_value
from tutor.judge.parsers import AnswerError, parse_answer
from tutor.judge.text_match import DEFAULT_MATCH, MATCH_MODES, TextMatch

# How much of an exception's message the reveal shows beside its class.
MESSAGE_SHOWN = 300


@dataclass(frozen=True)
class Verdict:
    correct: bool
    given: str  # the prediction as understood, in canonical spelling ("" if unreadable)
    observed: str  # the observation in the same spelling
    divergence: str = ""  # the first place prediction and observation part ways
    misconception: str = ""  # when the answer matches a listed wrong answer
    problem: str = ""  # the answer could not be read, or the value could not be observed
    note: str = ""  # the answer has the form of another kind ("you gave a dtype; …"); also in divergence/problem

    @property
    def readable(self) -> bool:
        return not self.problem


@dataclass(frozen=True)
class ReadAnswer:
    """A learner's answer, read once: the text typed, the value it means, or why it cannot be read."""

    text: str
    value: Any = None
    problem: str = ""  # why it cannot be read (the near-miss note first, when there is one)
    note: str = ""  # the answer has the form of another kind ("you gave a dtype; …")

    @property
    def readable(self) -> bool:
        return not self.problem


def read_answer(ask: Any, text: str) -> ReadAnswer:
    """Read ``text`` as an answer to ``ask`` (which needs ``kind`` and ``options``)."""
    note = near_miss(ask, text) if isinstance(text, str) else ""
    try:
        return ReadAnswer(text, parse_answer(ask.kind, text, ask.options), note=note)
    except AnswerError as exc:
        problem = f"{note[:1].upper()}{note[1:]}. {exc}" if note else str(exc)
        return ReadAnswer(text, problem=problem, note=note)


def judge(ask: Any, answer: str, described: Any, wrong_answers: Iterable[Any] = ()) -> Verdict:
    """Judge the typed ``answer`` to ``ask`` against the sandbox's description of the value.

    ``ask`` needs ``kind``, ``options``, ``tolerance`` and ``key``; wrong answers
    need ``ask``, ``answer`` and ``misconception`` (see :mod:`tutor.course.schema`).
    """
    return judge_read(ask, read_answer(ask, answer), described, wrong_answers)


def judge_read(ask: Any, said: ReadAnswer, described: Any, wrong_answers: Iterable[Any] = ()) -> Verdict:
    """Judge an answer already read (see :func:`read_answer`) against the described value."""
    try:
        observed = observed_value(ask.kind, described, ask.options)
    except NotObservable as exc:
        return Verdict(False, "", "", problem=f"this drill's value cannot be shown as {ask.kind}: {exc}")
    observed_text = render(ask.kind, observed, ask.options)
    if ask.kind == "error":
        observed_text = _with_message(observed_text, described)
    note = said.note
    if not said.readable:
        return Verdict(False, "", observed_text, problem=said.problem, note=note)
    predicted = said.value
    divergence = compare(ask.kind, predicted, observed, ask.tolerance, ask.options, _text_match(ask))
    bases = {b.lower() for b in getattr(ask, "bases", ())}  # the author's, and really bases of what was raised
    raised = {b.lower() for b in described.get("bases", ())} if isinstance(described, dict) else set()
    by_base = bool(divergence) and ask.kind == "error" and str(predicted).lower() in bases & raised
    if by_base:  # a documented base class of what was raised: right in substance
        divergence, note = None, f"it raised {observed}, a {predicted}"
    misconception = ""
    if divergence:
        misconception = matching_misconception(ask, predicted, wrong_answers)
        if note:
            divergence = f"{divergence} — {note}"
    return Verdict(divergence is None, render(ask.kind, predicted, ask.options), observed_text,
                   divergence or "", misconception, note=note if divergence or by_base else "")


def _text_match(ask: Any) -> TextMatch:
    return TextMatch(getattr(ask, "match", DEFAULT_MATCH), getattr(ask, "pattern", ""))


def _with_message(name: str, described: Any) -> str:
    """``RuntimeError: view size is not compatible …``: the message is often the lesson."""
    message = " ".join(str(described.get("message") or "").split()) if isinstance(described, dict) else ""
    if not message or name == "no error":
        return name
    if len(message) > MESSAGE_SHOWN:
        message = message[:MESSAGE_SHOWN - 1].rstrip() + "…"
    return f"{name}: {message}"


def matching_misconception(ask: Any, predicted: Any, wrong_answers: Iterable[Any]) -> str:
    """The misconception of the first listed wrong answer equal to ``predicted``."""
    for wrong in wrong_answers:
        if wrong.ask != ask.key:
            continue
        try:
            listed = parse_answer(ask.kind, wrong.answer, ask.options)
        except AnswerError:
            continue
        if compare(ask.kind, predicted, listed, ask.tolerance, ask.options, _text_match(ask)) is None:
            return wrong.misconception
    return ""


__all__ = ["DEFAULT_MATCH", "KINDS", "MATCH_MODES", "AnswerError", "ReadAnswer", "TextMatch", "Verdict", "expected_form",
           "judge", "judge_read", "matching_misconception", "option_label", "option_letter", "parse_answer",
           "read_answer"]
