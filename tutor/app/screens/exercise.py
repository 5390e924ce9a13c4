"""The exercise screen: a lab file in the learner's workspace, re-verified on every save."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Header, Markdown, Static, TextArea

from tutor.app.widgets.footer import key_footer
from tutor.app.messages import LabSubmitted
from tutor.app.screens.confirm import ConfirmScreen
from tutor.app.screens.lesson_screen import LessonScreen
from tutor.app.widgets.code_editor import EDITOR_KEYS, CodeEditor
from tutor.app.widgets.page import Page
from tutor.app.widgets.result_panel import ResultPanel
from tutor.app.widgets.view_prompt import VIEW_KEY_HELP, LabViewSubmitted, ViewPanel, ViewPrompt
from tutor.safe_text import inert
from tutor.wording import shown_title
from tutor.tutoring.reports import RunReport
from tutor.tutoring.states import Outcome
from tutor.tutoring.view_blocks import viewable_names
from tutor.tutoring.lab_brief import brief_lines
from tutor.workspace import Workspace, ensure_starter, read_exercise, reset_exercise


class ExerciseScreen(LessonScreen):
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True, tooltip="save the file; every save runs the checks"),
        Binding("ctrl+r", "verify", "Check", priority=True, show=False,
                tooltip="run the checks on the saved file (where file events do not arrive: WSL, network drives)"),
        Binding("ctrl+e", "open_editor", "$EDITOR", priority=True, tooltip="open the file in your own $EDITOR"),
        Binding("ctrl+t", "reset", "Reset", priority=True,
                tooltip="restore the starter file (your version is kept beside it)"),
        Binding("ctrl+g", "hint", "Hint", priority=True, tooltip="the next hint (hints come in tiers)"),
        # not in the footer (it is full at 80 columns): F1 lists it, and the file's note under the prompt
        Binding("ctrl+l", "view", "View", priority=True, show=False, tooltip=VIEW_KEY_HELP),
        Binding("ctrl+n", "next", "Next", priority=True, tooltip="next / previous (never automatic)"),
        Binding("ctrl+o", "previous", "Prev", priority=True, tooltip="next / previous (never automatic)"),
        Binding("escape", "map", "Map", priority=True, tooltip="back to the map"),
    ]

    def __init__(self, module_id: str, drill_id: str):
        super().__init__()
        self.module_id = module_id
        module = self.app.session.module(module_id)
        assert module is not None
        self.module = module
        drill = module.drill(drill_id)
        assert drill is not None and drill.is_exercise
        self.drill = drill
        self.workspace = Workspace(self.app.profile_name, self.app.session.course.identity)  # this course's files
        self.path: Path = ensure_starter(self.workspace, module_id, drill)
        self.hints_shown = 0
        self._clock = time.monotonic()
        self._last_saved = ""
        self._hints: tuple[str, ...] = ()
        self._checked = False  # a check has run (and shown its result): views open from then on

    def compose(self) -> ComposeResult:
        number = [d.id for d in self.module.drills].index(self.drill.id) + 1
        slot = self.app.session.slot(self.module_id)
        yield Header()
        with Page(classes="drill-scroll"):
            yield Static(Text(f"{self.module_id} · {inert(slot.title)} — lab {number}/{len(self.module.drills)}: "
                              f"{inert(shown_title(self.drill))}"), classes="where")
            yield Markdown(inert(self.drill.prompt), id="prompt")
            brief = brief_lines(self.drill)
            if brief:
                yield Markdown(inert("\n\n".join(brief)), id="brief")
            yield Static(Text.assemble(("Your file: ", "bold"), str(self.path),
                                       "\nEdit it in your own editor (ctrl+e opens $EDITOR) or right here; every "
                                       "save re-runs the checks. ctrl+r re-runs them by hand; after a check, "
                                       "ctrl+l opens a view of any name the code binds."), id="file")
            yield Static("", id="stages")
            yield CodeEditor.python("", id="editor")
            yield Static(Text(EDITOR_KEYS, style="dim"), id="editor-keys", classes="-shown")
            yield Static("", id="status")
            yield ResultPanel(id="result")
            yield ViewPanel(id="view")
            yield Static("", id="hints")
            yield Markdown("", id="explanation")
            yield Markdown("", id="solution")
        yield key_footer()

    def on_mount(self) -> None:
        self._load_file()
        editor = self.query_one("#editor", TextArea)
        editor.add_class("-shown")
        editor.focus(scroll_visible=False)  # the page opens at its top: the instructions first
        if self.app.session.drill_done(self.module_id, self.drill.id):
            self.set_status("You solved this before. Change anything and save to check again.")
            self._show_solution()
        else:
            self.set_status("Write your solution and save (ctrl+s); the checks run on every save.")
        self.watch_file()

    def _load_file(self) -> None:
        try:
            text = read_exercise(self.path)
        except ValueError as exc:
            self.set_status(str(exc))
            return
        self._last_saved = text
        editor = self.query_one("#editor", TextArea)
        if editor.text != text:
            editor.load_text(text)

    # ---------------------------------------------------------------- watching and verifying

    @work(group="watch", exit_on_error=False)
    async def watch_file(self) -> None:
        """Re-verify whenever the file changes on disk (ctrl+r covers systems without file events)."""
        from tutor.app.file_watch import file_changes

        target = str(self.path)
        async for _ in file_changes(self.path.parent, lambda path: path == target, debounce_ms=200):
            try:
                if read_exercise(self.path) == self._last_saved:
                    continue  # our own save, already verified
            except ValueError:
                pass
            self._load_file()
            self.action_verify()

    def action_verify(self) -> None:
        """Check the file as saved: the service reads it (and the lab's other files), runs and records it."""
        self.set_status("Running the checks in the sandbox…")
        self.post_message(LabSubmitted(self.module_id, self.drill, time.monotonic() - self._clock))

    def _show_stages(self, notes: tuple[str, ...]) -> None:
        """Whose code each earlier stage ran, shown under the file (a chained lab only)."""
        if notes:
            self.query_one("#stages", Static).update(Text("Earlier stages: " + "; ".join(inert(n) for n in notes)))

    def current_hints(self) -> tuple[str, ...]:
        """The first failing test's own hints come first, once a run has said which test fails."""
        return self._hints or tuple(self.drill.hints)

    def show(self, report: RunReport) -> None:
        if report.outcome == Outcome.FILE_UNREADABLE:  # nothing ran: the last result stands, the status says why
            self.set_status(report.problems["code"])
            return
        self._show_stages(report.stages)
        self._checked = True
        if report.hints and report.hints != self._hints:
            self._hints, self.hints_shown = report.hints, 0
        if report.outcome == Outcome.SOLVED:
            self._show_solution()
        if report.outcome == Outcome.NOT_FINISHED:
            self.set_status(f"{report.not_recorded} Fix the code and save again.")
        else:
            self.set_status(STATUS.get(report.outcome, "Not yet: fix the first failing check, then save."))
        self._clock = time.monotonic()

    def _show_solution(self) -> None:
        explanation = self.query_one("#explanation", Markdown)
        explanation.update("### Why\n\n" + inert(self.drill.explanation))
        explanation.add_class("-shown")
        self.show_solution("The reference solution")

    # ---------------------------------------------------------------- views

    def action_view(self) -> None:
        """A view of any name the file (and the lab's probe) binds, once a check has run: nothing judged."""
        if not self._checked:
            self.notify("Save (ctrl+s) to run the checks first; then ctrl+l opens a view of any name.", timeout=4)
            return
        try:
            saved = read_exercise(self.path)
        except (OSError, ValueError):
            saved = ""
        self.app.push_screen(ViewPrompt(self._last_view, viewable_names(saved, self.drill.probe)), self._open_view)

    def request_view(self, kind: str, of: str, optimizer: str) -> None:
        self.set_status(f"Running your saved file again for a {kind} view of {of}…")
        self.post_message(LabViewSubmitted(self.module_id, self.drill, None, kind, of, optimizer))

    # ---------------------------------------------------------------- actions

    def action_save(self) -> None:
        text = self.query_one("#editor", TextArea).text
        try:
            self.path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.set_status(f"Could not save {self.path}: {exc.strerror}")
            return
        self._last_saved = text
        self.action_verify()

    def action_open_editor(self) -> None:
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if not editor:
            self.notify("Set $EDITOR (e.g. export EDITOR=nano) to edit in your own editor; "
                        "meanwhile edit here and press ctrl+s.", timeout=8)
            return
        self.action_save_if_dirty()
        try:
            with self.app.suspend():
                subprocess.call(shlex.split(editor) + [str(self.path)])
        except Exception as exc:  # noqa: BLE001 - e.g. the command does not exist, or no terminal to suspend
            self.notify(f"Could not start {editor!r}: {exc}", severity="error")
            return
        self._load_file()
        self.action_verify()

    def action_save_if_dirty(self) -> None:
        text = self.query_one("#editor", TextArea).text
        if text != self._last_saved:
            self.path.write_text(text, encoding="utf-8")
            self._last_saved = text

    def action_reset(self) -> None:
        def done(confirmed: bool | None) -> None:
            if not confirmed:
                return
            kept = reset_exercise(self.workspace, self.module_id, self.drill)
            self._load_file()
            self.query_one("#result", ResultPanel).clear()  # the last run's result was about the old file
            self._hints, self.hints_shown = (), 0
            self.query_one("#hints", Static).update("")
            where = f" Your version is kept at {kept}." if kept else ""
            self.set_status(f"The starter is back.{where}")

        self.app.push_screen(ConfirmScreen("Restore the starter file? Your current version is kept beside it."),
                             done)


STATUS = {
    Outcome.SOLVED: "Solved ✓  The reference solution and the explanation are below. ctrl+n: next.",
    Outcome.CHECK_FAILS: "Not yet: fix the first failing check, then save.",
}
