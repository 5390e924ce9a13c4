"""Judging "at which line does it first go wrong?": the learner's line (or stage) against the traced run's.

The observed answer is the first :class:`~tutor.judge.contracts.Failure` in the trace of
the real run, never the drill's declared ``answer`` (``pytorch-tutor check`` proves the
two agree). A learner answers a line (``4``, ``line 4``, ``L4``) or a stage's name (or
its option letter); a stage is right when the failing line is in it, a line when it is
the failing line.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from tutor.course.divergence_fields import FirstDivergence
from tutor.judge.contracts import Failure

_LINE = re.compile(r"(?:line\s*|l\s*)?#?(\d{1,6})\.?", re.IGNORECASE)


class LineAnswerError(ValueError):
    pass


def parse_line(text: str, options: tuple[str, ...] = ()) -> tuple[str, Any]:
    """("line", 4) or ("stage", "normalise"); ``options`` are the drill's stage names."""
    said = " ".join(str(text).strip().strip("'\"`").split())
    if not said:
        raise LineAnswerError(_form(options, "Type a line number"))
    match = _LINE.fullmatch(said)
    if match:
        return "line", int(match.group(1))
    for name in options:
        if said.lower() in (name.lower(), f"stage {name.lower()}", f"the {name.lower()} stage"):
            return "stage", name
    if len(said) == 1 and said.isalpha() and ord(said.lower()) - ord("a") < len(options):
        return "stage", options[ord(said.lower()) - ord("a")]
    raise LineAnswerError(_form(options, f"{said[:40]!r} is not a line number"))


def _form(options: tuple[str, ...], lead: str) -> str:
    stages = f", or a stage: {', '.join(options)}" if options else ""
    return f"{lead}: give a line of the code as N, line N or LN{stages}"


def render_line(value: tuple[str, Any]) -> str:
    kind, what = value
    return f"line {what}" if kind == "line" else f"stage {what}"


def is_right(value: tuple[str, Any], failure: Failure, spec: FirstDivergence) -> bool:
    kind, what = value
    if kind == "line":
        if spec.answer_stage and failure.line not in (spec.stage(spec.answer_stage) or ()):
            return False
        return what == failure.line
    stage = spec.stage(what)
    return stage is not None and failure.line in stage


def divergence_text(value: tuple[str, Any], failure: Failure, spec: FirstDivergence) -> str:
    """What the feedback says: the learner's line, where it first failed, and what the trace showed there."""
    chose = render_line(value)
    where = failure.where
    stage = spec.stage_of(failure.line)
    if stage is not None:
        where += f" (stage {stage.name})"
    if value[0] == "line" and value[1] > failure.line:
        lead = f"You chose {chose}, but a contract already fails earlier, on {where}"
    elif value[0] == "line":
        lead = f"You chose {chose}; every contract still holds there — the first failure is later, on {where}"
    else:
        lead = f"You chose {chose}; the first failure is on {where}"
    return f"{lead}: {failure.detail}"


def misconception(value: tuple[str, Any], wrong_answers: Iterable[Any], options: tuple[str, ...]) -> str:
    for wrong in wrong_answers:
        try:
            if parse_line(wrong.answer, options) == value:
                return wrong.misconception
        except LineAnswerError:
            continue
    return ""
