"""The exercise screen: a lab file in the learner's workspace, re-verified on every save."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Markdown, Static, TextArea

from tutor.app.screens.confirm import ConfirmScreen
from tutor.app.screens.lesson_screen import LessonScreen
from tutor.grading import describe_error, grade, request_for
from tutor.safe_text import clip, inert
from tutor.session import code_run_passed
from tutor.workspace import ensure_starter, read_exercise, reset_exercise


class ExerciseScreen(LessonScreen):
    BINDINGS = [
        Binding("ctrl+r", "verify", "Run checks", priority=True),
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("ctrl+e", "open_editor", "Open in $EDITOR", priority=True),
        Binding("ctrl+t", "reset", "Reset", priority=True),
        Binding("ctrl+g", "hint", "Hint", priority=True),
        Binding("ctrl+n", "next", "Next", priority=True),
        Binding("ctrl+o", "previous", "Previous", priority=True),
        Binding("escape", "map", "Map", priority=True),
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
        self.path: Path = ensure_starter(self.app.profile_name, module_id, drill)
        self.hints_shown = 0
        self._clock = time.monotonic()
        self._last_saved = ""

    def compose(self) -> ComposeResult:
        number = [d.id for d in self.module.drills].index(self.drill.id) + 1
        slot = self.app.session.slot(self.module_id)
        yield Header()
        with VerticalScroll(classes="drill-scroll"):
            yield Static(Text(f"{self.module_id} · {inert(slot.title)} — exercise {number}/{len(self.module.drills)}: "
                              f"{inert(self.drill.title)}"), classes="where")
            yield Markdown(inert(self.drill.prompt), id="prompt")
            yield Static(Text.assemble(("Your file: ", "bold"), str(self.path),
                                       "\nEdit it in your own editor (ctrl+e opens $EDITOR) or right here; every "
                                       "save re-runs the checks. ctrl+r re-runs them by hand."), id="file")
            yield TextArea("", id="editor", soft_wrap=False, show_line_numbers=True, tab_behavior="indent")
            yield Static("", id="status")
            yield Static("", id="result")
            yield Static("", id="hints")
            yield Markdown("", id="explanation")
            yield Markdown("", id="solution")
        yield Footer()

    def on_mount(self) -> None:
        self._load_file()
        editor = self.query_one("#editor", TextArea)
        editor.add_class("-shown")
        editor.focus()
        if self.app.session.drill_done(self.module_id, self.drill.id):
            self.set_status("You solved this before. Change anything and save to check again.")
            self._show_solution()
        else:
            self.set_status("Write your solution and save (ctrl+s); the checks run on every save.")
        self.watch_file()

    def set_status(self, message: str) -> None:
        self.query_one("#status", Static).update(Text(message))

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
        try:
            from watchfiles import awatch
        except ImportError:  # pragma: no cover - watchfiles is a dependency; keep the manual key working
            return
        target = str(self.path)
        async for changes in awatch(self.path.parent, watch_filter=lambda _change, p: p == target,
                                    debounce=200, rust_timeout=1000):
            if changes:
                try:
                    if read_exercise(self.path) == self._last_saved:
                        continue  # our own save, already verified
                except ValueError:
                    pass
                self._load_file()
                self.action_verify()

    def action_verify(self) -> None:
        try:
            code = read_exercise(self.path)
        except ValueError as exc:
            self.set_status(str(exc))
            return
        self.set_status("Running the checks in the sandbox…")
        self.run_checks(code)

    @work(exclusive=True, group="sandbox", exit_on_error=False)
    async def run_checks(self, code: str) -> None:
        seconds = time.monotonic() - self._clock
        try:
            result = await self.app.sandbox.run(request_for(self.drill, code))
            outcome = grade(self.drill, {}, result)
            self._show(code, outcome, seconds)
        except Exception as exc:  # noqa: BLE001 - a message, never a traceback
            self.set_status(f"Something went wrong running the checks: {type(exc).__name__}: {exc}")

    def _show(self, code: str, outcome, seconds: float) -> None:
        result_widget = self.query_one("#result", Static)
        result = outcome.result
        parts: list = []
        if not result.ok:
            parts.append(Text(result.message, style="bold red"))
            self.set_status("The run did not finish; fix the code and save again.")
        else:
            unlocked = self.app.session.record_code_run(self.module_id, self.drill, code, outcome, seconds,
                                                        "exercise")
            if code_run_passed(outcome):
                parts.append(Text("All checks pass ✓", style="bold green"))
                self.set_status("Solved ✓  The reference solution and the explanation are below. ctrl+n: next.")
                self._show_solution()
            else:
                parts.append(self._first_failure(outcome))
                self.set_status("Not yet: fix the first failing check, then save.")
            self.app.announce_unlocked(unlocked)
        if result.output.strip():
            parts.append(Text("Output:", style="bold"))
            parts.append(Text(clip(result.output.rstrip("\n"), 3000)))
        result_widget.update(Group(*parts))
        result_widget.scroll_visible()
        self._clock = time.monotonic()

    def _first_failure(self, outcome) -> Group:
        if outcome.error is not None:
            return Group(Text.assemble(("Your code raised ", "bold red"), inert(describe_error(outcome.error))))
        for rule in outcome.fence:
            return Group(Text(f"Fence rule broken: {inert(rule)}", style="bold red"))
        obs = outcome.result.observation
        detail, line_no = (obs.check_message, obs.check_line) if obs else ("", None)
        lines = self.drill.check.splitlines()
        parts = [Text("First failing check:", style="bold red")]
        if line_no and 0 < line_no <= len(lines):
            parts.append(Syntax(lines[line_no - 1].strip(), "python", theme="ansi_dark",
                                background_color="default"))
        if detail:
            parts.append(Text(inert(detail)))
        return Group(*parts)

    def _show_solution(self) -> None:
        explanation = self.query_one("#explanation", Markdown)
        explanation.update("### Why\n\n" + inert(self.drill.explanation))
        explanation.add_class("-shown")
        solution = self.query_one("#solution", Markdown)
        solution.update("### The reference solution\n\n```python\n" + inert(self.drill.solution.rstrip("\n"))
                        + "\n```")
        solution.add_class("-shown")

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
            kept = reset_exercise(self.app.profile_name, self.module_id, self.drill)
            self._load_file()
            where = f" Your version is kept at {kept}." if kept else ""
            self.set_status(f"The starter is back.{where}")

        self.app.push_screen(ConfirmScreen("Restore the starter file? Your current version is kept beside it."),
                             done)
