"""Symptoms-first repairs (``symptoms_first: true``): diagnose a run from what it printed, then see its source.

Debugging starts from symptoms: a loss curve, a log, an exception, never the line with the bug.
Such a drill opens with its prompt and without its code: the tutor runs the drill's code once,
as it runs any drill, and shows only what the program printed (and the exception it raised).
The learner's diagnosis (the drill's asks) is judged against that same run, so what they read
is what they are judged on, and nothing runs twice; only after the diagnosis is recorded do the
code and setup appear, and the drill goes on as any repair.

A mixin of :class:`tutor.tutoring.service.TutoringService` (it uses the service's ``_run``,
``in_review`` and ``_predictions``); the decisions live here so that every front end asks the
same questions: is the source hidden now, and what may be shown before the answers.
"""

from __future__ import annotations

import re
from typing import Mapping

from tutor.course.schema import Drill
from tutor.grading import DrillOutcome, describe_error, grade_read, request_for
from tutor.judge import ReadAnswer, option_label
from tutor.safe_text import inert
from tutor.sandbox.client import RunResult
from tutor.tutoring import instances
from tutor.tutoring.presentation import Block, Tone, line, output_blocks
from tutor.tutoring.reports import SymptomsReport
from tutor.tutoring.states import RunStatus

SOURCE_HIDDEN = "The source comes after your diagnosis: read what the run printed, then answer."
PRINTED = "What the program printed:"
PRINTED_NOTHING = "The program printed nothing."
SOURCE_SHOWN = "Your diagnosis is recorded: here is the source of the run you diagnosed."


class SymptomsUseCases:
    @property
    def symptom_runs(self) -> dict[tuple[str, str, str], RunResult]:
        """The symptoms run a learner is diagnosing, by (module, drill, instance): their answers are judged on it."""
        return self.__dict__.setdefault("_symptom_runs", {})

    def hides_source(self, module_id: str, drill: Drill) -> bool:
        """The drill opens on its symptoms, its code and setup hidden: a symptoms-first repair not yet
        diagnosed (on this instance, for a drill with variants), or one due for review (recall repeats
        the diagnosis). A drill diagnosed before, right or wrong, shows its source at once: the
        observed values were shown with that diagnosis."""
        if not drill.symptoms_first:
            return False
        if self.in_review(module_id, drill):
            return True
        return not any(instances.verified_on(drill, a) for a in self._predictions(module_id, drill))

    async def open_symptoms(self, module_id: str, drill: Drill) -> SymptomsReport:
        """Run the drill's code once and report only what it printed (and raised); keep the run, whose
        observed values are the answers, for :meth:`graded_symptoms`."""
        result = await self._run(request_for(drill))
        self.symptom_runs[_run_key(module_id, drill)] = result
        return symptoms_report(module_id, drill.id, result)

    def graded_symptoms(self, module_id: str, drill: Drill, said: Mapping[str, ReadAnswer]) -> DrillOutcome | None:
        """The learner's diagnosis judged against the run they read (None: no finished symptoms run is open)."""
        result = self.symptom_runs.get(_run_key(module_id, drill)) if drill.symptoms_first else None
        return grade_read(drill, said, result) if result is not None and result.ok else None


def _run_key(module_id: str, drill: Drill) -> tuple[str, str, str]:
    return module_id, drill.id, instances.key(drill)


def symptoms_report(module_id: str, drill_id: str, result: RunResult) -> SymptomsReport:
    """What may be shown before the answers: the output and the exception, never an ask's value or the check."""
    status = RunStatus.read(result.status)
    if not result.ok or result.observation is None:
        return SymptomsReport(module_id, drill_id, status, message=result.message, output=result.output,
                              output_truncated=result.output_truncated)
    error = result.observation.error
    return SymptomsReport(module_id, drill_id, status, output=result.output, output_truncated=result.output_truncated,
                          error=describe_error(error) if error is not None else "")


def symptoms_blocks(report: SymptomsReport) -> list[Block]:
    """The symptoms as the app and plain mode show them: the output capped as any run's, inert."""
    blocks: list[Block] = [line((SOURCE_HIDDEN, Tone.DIM))]
    if not report.finished:
        return blocks + [line((inert(report.message), Tone.BAD))] + output_blocks(report, PRINTED)
    blocks.extend(output_blocks(report, PRINTED) or [line((PRINTED_NOTHING, Tone.DIM))])
    if report.error:
        blocks.append(line(("It raised ", Tone.BAD), inert(report.error)))
    return blocks


# ---------------------------------------------------------------- the author's check (``pytorch-tutor check``)

CODE_LINE_SHOWN = 10  # a line of code this long (stripped) in the prompt shows the source before the diagnosis


def giveaway_problems(drill: Drill, outcome: DrillOutcome) -> list[str]:
    """Why a symptoms-first drill's symptoms or prompt would give its diagnosis away ([] for any other drill).

    ``outcome``: the drill's own run, as the learner's symptoms run is made. An observed answer printed
    as a whole word or number in what the learner reads first (the output, the exception line) answers
    its ask by copying; a line of the code in the prompt shows the source the drill hides.
    """
    if not drill.symptoms_first:
        return []
    shown = symptoms_report("", drill.id, outcome.result)
    printed = f"{shown.output}\n{shown.error}"
    problems = []
    for a in outcome.asks:
        spellings = _spellings(a.ask, a.verdict.observed) if a.verdict is not None and a.verdict.observed else []
        spelling = next((s for s in spellings if _printed(s, printed)), None)
        if spelling is not None:
            problems.append(f"symptoms_first: ask {a.ask.key!r}: its answer {spelling!r} is printed by the run the "
                            "learner diagnoses, so the symptoms give it away: print what shows the mechanism, "
                            "not the answer")
    prompt = " ".join(drill.prompt.split())
    problems += [f"symptoms_first: the prompt holds line {number} of the code ({text!r}): the source is "
                 "hidden until the diagnosis, so describe the program instead"
                 for number, text in _code_lines(drill.code) if text in prompt]
    return problems


def _spellings(ask, observed: str) -> list[str]:
    """The observed answer as the output could print it: a choice's option text, a bool as Python prints it."""
    for i, option in enumerate(ask.options):
        if observed == option_label(i, option):
            return [option]
    if ask.kind == "bool":
        return [observed, {"yes": "True", "no": "False"}.get(observed.lower(), observed)]
    return [observed]


def _printed(answer: str, text: str) -> bool:
    """``answer`` in ``text`` as a whole word or number (``3`` is not in ``0.35``), case aside."""
    answer = answer.strip()
    return bool(answer) and re.search(rf"(?<![\w.]){re.escape(answer)}(?!\w|\.\d)", text, re.IGNORECASE) is not None


def _code_lines(code: str) -> list[tuple[int, str]]:
    lines = [(n, " ".join(text.split())) for n, text in enumerate(code.splitlines(), start=1)]
    return [(n, text) for n, text in lines if len(text) >= CODE_LINE_SHOWN and not text.startswith("#")]
