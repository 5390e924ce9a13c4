"""The drill screen's part of a symptoms-first repair: the run's output first, the source after the diagnosis.

The tutoring core decides (``TutoringService.hides_source``, ``open_symptoms``; see
:mod:`tutor.tutoring.symptoms`); this only shows what it reports. While the source is hidden the
screen holds no copy of it at all (the code view and the editor start empty), so nothing of it
can be scrolled to, copied or exported before the answers are in.
"""

from __future__ import annotations

from tutor.app.messages import SymptomsSubmitted
from tutor.app.widgets.code_view import CodeView
from tutor.app.widgets.page import reveal
from tutor.app.widgets.result_panel import ResultPanel
from tutor.tutoring.reports import RunReport, SymptomsReport
from tutor.tutoring.symptoms import symptoms_blocks

RUNNING = "Running the program in the sandbox: what it prints comes here, its source after your diagnosis…"
READ_THEN_DIAGNOSE = ("Read what the program printed, then diagnose it: answer each question and press Enter. "
                      "The source appears once your diagnosis is recorded.")
REVIEW = "Due for review: diagnose this run from its symptoms again, from memory. "
NOT_FINISHED = "The run did not finish, so there is nothing to read yet; Enter runs it again with your answers."


class SymptomsFirst:
    """Mixed into the drill screen: ``source_hidden`` is set by the screen from the core's decision."""

    source_hidden = False

    def shown_source(self) -> tuple[str, str]:
        """The (code, setup) the screen may hold now: none while the source is hidden."""
        return ("", "") if self.source_hidden else (self.drill.code, self.drill.setup)

    def open_symptoms(self) -> None:
        """On mount: run the code once; its report arrives as a message (no timed wait)."""
        if not self.source_hidden:
            return
        self.phase = "running"
        self.set_status(RUNNING, running=True)
        self.post_message(SymptomsSubmitted(self.module_id, self.drill, 0.0))

    def show_symptoms(self, report: SymptomsReport) -> None:
        panel = self.query_one("#symptoms", ResultPanel)
        panel.show_blocks(symptoms_blocks(report))
        reveal(panel)
        review = REVIEW if self.in_review else ""
        self.set_status(review + (READ_THEN_DIAGNOSE if report.finished else NOT_FINISHED))
        self._finished()  # the answers can run now; their time starts with the symptoms on screen

    def reveal_source(self, report: RunReport) -> None:
        """After a recorded diagnosis: the code and setup, as any repair shows them (the editor loads on ctrl+e)."""
        if self.source_hidden and report.recorded is not None:
            self.source_hidden = False
            view = self.query_one("#code", CodeView)
            view.show(self.drill.code, self.drill.setup)
            view.edited = self.app.tutoring.code_for(self.module_id, self.drill) != self.drill.code
