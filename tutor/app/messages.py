"""The app's own messages: a screen says what the learner did; the report comes back the same way.

As in harlequin (``QuerySubmitted`` -> a worker -> ``QueriesExecuted``): a screen posts
an ``*Submitted`` message, :class:`tutor.app.screens.lesson_screen.LessonScreen` runs it
through the tutoring service in a worker of its own (leaving the screen cancels the
run, and the sandbox stops what it started), and posts :class:`Reported` back, which
the screen renders and the app reads for what was unlocked ("attributes down,
messages up").
"""

from __future__ import annotations

from typing import Mapping

from textual.message import Message

from tutor.course.schema import Drill
from tutor.judge import ReadAnswer
from tutor.progress.store import AttemptKind
from tutor.tutoring.reports import PlacementReport, RunReport, SelfCheckReport, SymptomsReport
from tutor.tutoring.service import TutoringService


class Submitted(Message):
    """A learner action for the tutoring service."""

    def __init__(self, module_id: str, drill: Drill, seconds: float):
        super().__init__()
        self.module_id = module_id
        self.drill = drill
        self.seconds = seconds

    async def perform(self, service: TutoringService) -> RunReport:
        raise NotImplementedError


class PredictionSubmitted(Submitted):
    def __init__(self, module_id: str, drill: Drill, said: Mapping[str, ReadAnswer], seconds: float,
                 confidence: int | None, shown: Mapping[str, str] | None = None):
        super().__init__(module_id, drill, seconds)
        self.said = said
        self.confidence = confidence
        self.shown = shown  # what the boxes held when the drill opened (a review judges against it)

    async def perform(self, service: TutoringService) -> RunReport:
        return await service.submit_prediction(self.module_id, self.drill, self.said, self.seconds, self.confidence,
                                               shown=self.shown)


class CodeSubmitted(Submitted):
    """Edited code: an experiment or a repair (``kind`` says which)."""

    def __init__(self, module_id: str, drill: Drill, code: str, seconds: float, kind: AttemptKind,
                 last_said: Mapping[str, ReadAnswer] | None = None):
        super().__init__(module_id, drill, seconds)
        self.code = code
        self.kind = kind
        self.last_said = last_said

    async def perform(self, service: TutoringService) -> RunReport:
        if self.kind == AttemptKind.REPAIR:
            return await service.submit_repair(self.module_id, self.drill, self.code, self.seconds)
        return await service.run_experiment(self.module_id, self.drill, self.code, self.seconds, self.last_said)


class SymptomsSubmitted(Submitted):
    """A symptoms-first repair opened: its code runs once, and only what it printed comes back."""

    async def perform(self, service: TutoringService) -> SymptomsReport:
        return await service.open_symptoms(self.module_id, self.drill)


class LabSubmitted(Submitted):
    """A lab's file as saved in the workspace: the service reads it (and the lab's other files) and checks it."""

    async def perform(self, service: TutoringService) -> RunReport:
        return await service.check_lab_file(self.module_id, self.drill, self.seconds)


class Reported(Message):
    """The service's report of an action; bubbles from the screen to the app."""

    def __init__(self, report: RunReport | SelfCheckReport | PlacementReport | SymptomsReport):
        super().__init__()
        self.report = report
