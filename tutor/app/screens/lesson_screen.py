"""What the drill and exercise screens share: running an action, moving through a module, hints."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.screen import Screen
from textual.widgets import Markdown, Static

from tutor.app.messages import Reported, Submitted
from tutor.app.widgets.page import reveal
from tutor.app.widgets.result_panel import ResultPanel, rich_line
from tutor.app.widgets.view_prompt import VIEW_OPENED, ViewPanel
from tutor.safe_text import inert
from tutor.tutoring.presentation import hint_line
from tutor.tutoring.reports import RunReport, SymptomsReport, ViewReport


class LessonScreen(Screen):
    """A screen showing one drill of a module; subclasses set ``module_id`` and ``drill``."""

    module_id: str
    hints_shown: int = 0
    _queued = False  # a run was asked for before the zygote answered (the status line says so)

    def set_status(self, message: str, running: bool = False) -> None:
        status = self.query_one("#status", Static)
        self.status_text = message  # as said, before any note added below
        self._queued = running and not getattr(self.app, "sandbox_ready", True)
        if self._queued:  # a run asked for before the zygote is up waits for it: say so, not silence
            self._queued_message = message
            message = f"Queued: the sandbox is still starting, and your run goes as soon as it is ready. ({message})"
        status.update(Text(message))
        status.set_class(running, "-running")

    def sandbox_is_ready(self) -> None:
        """The zygote answered: a queued run is running now."""
        if self._queued and self.query_one("#status", Static).has_class("-running"):
            self.set_status(self._queued_message, running=True)

    @on(Submitted)
    def _submitted(self, message: Submitted) -> None:
        message.stop()
        self._perform(message)

    @work(exclusive=True, group="sandbox", exit_on_error=False)
    async def _perform(self, message: Submitted) -> None:
        """Run one action through the service; a worker of this screen, so leaving the screen stops it."""
        try:
            report = await message.perform(self.app.tutoring)
        except Exception as exc:  # noqa: BLE001 - the learner sees a message, never a traceback
            self.set_status(f"Something went wrong running this: {type(exc).__name__}: {exc}")
            self.after_failure()
            return
        self.post_message(Reported(report))

    def after_failure(self) -> None:
        """After an action could not be run at all (subclasses reset what they were doing)."""

    @on(Reported)
    def _reported(self, message: Reported) -> None:
        if isinstance(message.report, ViewReport):
            message.stop()  # a view records nothing and unlocks nothing: the app need not hear of it
            self.show_view(message.report)
        elif isinstance(message.report, SymptomsReport):
            message.stop()  # opening a drill records nothing and unlocks nothing
            self.show_symptoms(message.report)
        elif isinstance(message.report, RunReport):  # it bubbles on to the app, which announces unlocks
            if message.report.status is not None:  # nothing ran (e.g. a lab file that cannot be read): the last
                panel = self.query_one("#result", ResultPanel)  # result stands, and show() says why
                panel.show_report(message.report, self.heading(message.report))
                reveal(self.query_one("#status"), panel)  # what to do next, and the report under it
            self.show(message.report)

    def heading(self, report: RunReport) -> str:
        return ""

    def show_symptoms(self, report: SymptomsReport) -> None:
        """A symptoms-first repair's run, before the answers (the drill screen shows it)."""

    def show(self, report: RunReport) -> None:
        """What else a report changes on this screen (the status, the explanation, the solution)."""

    # ---------------------------------------------------------------- views (ctrl+l): both screens have #view

    _last_view = ""  # what the view prompt offers again

    def _open_view(self, chosen: tuple[str, str, str] | None) -> None:
        """The view prompt's answer: ``(kind, of, optimizer)``, or None when it was dismissed."""
        if chosen is None:
            return
        self._last_view = " ".join(part for part in chosen if part)
        self.request_view(*chosen)

    def request_view(self, kind: str, of: str, optimizer: str) -> None:
        """Ask the service for the view (the drill runs its code again, a lab the saved file)."""

    def show_view(self, report: ViewReport) -> None:
        panel = self.query_one("#view", ViewPanel)
        panel.show_view(report)
        reveal(panel)
        self.set_status(VIEW_OPENED)

    def show_solution(self, heading: str) -> None:
        solution = self.query_one("#solution", Markdown)
        solution.update(f"### {heading}\n\n```python\n" + inert(self.drill.solution.rstrip("\n")) + "\n```")
        solution.add_class("-shown")

    def current_hints(self) -> tuple[str, ...]:
        return tuple(self.drill.hints)

    def action_hint(self) -> None:
        hints = self.current_hints()
        if self.hints_shown >= len(hints):
            # After the reveal the explanation is already on screen: do not send the learner to it.
            said = f"All {len(hints)} hints are shown." if getattr(self, "revealed", False) else \
                "No more hints here: run it and read the explanation."
            self.notify(said, timeout=4)
            return
        self.hints_shown += 1
        text = Text()
        for number in range(1, self.hints_shown + 1):
            text.append_text(rich_line(hint_line(hints, number)))
            text.append("\n")
        widget = self.query_one("#hints", Static)
        widget.update(text)
        widget.add_class("-shown")
        reveal(widget)

    def action_next(self) -> None:
        app = self.app
        following = app.session.next_after(self.module_id, self.drill.id)
        practice, app.practice_return = app.practice_return, None
        if practice is not None and practice[0] == (self.module_id, self.drill.id):
            module_id, item = practice[1]  # this was a woven-in weak spot: on where the learner was
            app.open_item(module_id, item) if item is not None else app.back_to_map()
            return
        spot = app.session.practice_after(self.module_id, self.drill.id, following)
        if spot is not None:
            app.open_practice(spot, (self.module_id, following))
            return
        if following is None:
            self.app.back_to_map()
        else:
            self.app.open_item(self.module_id, following)

    def action_previous(self) -> None:
        before = self.app.session.previous_before(self.module_id, self.drill.id)
        if before is not None:
            self.app.open_item(self.module_id, before)

    def action_map(self) -> None:
        self.app.back_to_map()
