"""Plain mode's drill source: the code shown before the answers, or, for a symptoms-first repair, its run's output.

A mixin of :class:`tutor.plain.plain_tutor.PlainTutor` (``say``, ``act`` and ``service``). The tutoring
core decides whether the source is hidden (:mod:`tutor.tutoring.symptoms`); this prints what it reports.
"""

from __future__ import annotations

from tutor.course.schema import Drill
from tutor.plain.reading import numbered
from tutor.tutoring.presentation import plain_lines
from tutor.tutoring.symptoms import SOURCE_SHOWN, symptoms_blocks


class PlainSource:
    def source_or_symptoms(self, module_id: str, drill: Drill) -> bool:
        """The drill's setup and code; or, while a symptoms-first repair is undiagnosed, only what its run
        printed (the run the answers are judged on). True: the source is hidden."""
        if not self.service.hides_source(module_id, drill):
            self.show_code(drill)
            return False
        report = self.act(self.service.open_symptoms(module_id, drill))
        self.say("")
        for text in plain_lines(symptoms_blocks(report)):
            self.say(text)
        return True

    def source_after_diagnosis(self, drill: Drill) -> bool:
        """The diagnosis is recorded: now the source. False: it is hidden no more."""
        self.say("")
        self.say(SOURCE_SHOWN)
        self.show_code(drill)
        return False

    def show_code(self, drill: Drill) -> None:
        self.say("")
        if drill.setup.strip():
            self.say("Setup:")
            self.say(numbered(drill.setup))
        self.say("Code:")
        self.say(numbered(drill.code))
