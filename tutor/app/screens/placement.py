"""Test out: a short placement set that opens a locked module for a learner who knows its prerequisites."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Markdown, Static

from tutor.judge import AnswerError
from tutor.safe_text import inert
from tutor.session import PLACEMENT_PASS
from tutor.tutoring.presentation import option_lines
from tutor.tutoring.reports import PlacementAnswer


class PlacementScreen(Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Give up")]

    def __init__(self, module_id: str):
        super().__init__()
        self.module_id = module_id
        self.questions = self.app.session.placement_set(module_id)
        self.index = 0
        self.results: list[PlacementAnswer] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(classes="drill-scroll"):
            yield Static("", id="where", classes="where")
            yield Markdown("", id="question")
            yield Static("", id="options")
            yield Input(placeholder="the letter of your answer", id="answer")
            yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.show_question()

    def show_question(self) -> None:
        module_id, check = self.questions[self.index]
        slot = self.app.session.slot(self.module_id)
        self.query_one("#where", Static).update(Text(
            f"Test out of the prerequisites of {self.module_id} {inert(slot.title)} — question "
            f"{self.index + 1}/{len(self.questions)} (from module {module_id})"))
        self.query_one("#question", Markdown).update(inert(check.question))
        self.query_one("#options", Static).update(Text("\n".join(option_lines(check.options, "  "))))
        answer = self.query_one("#answer", Input)
        answer.value = ""
        answer.focus()
        self.query_one("#status", Static).update(Text(
            f"Answer {PLACEMENT_PASS:.0%} right to open the module directly. Escape gives up."))

    @on(Input.Submitted, "#answer")
    async def submit(self, event: Input.Submitted) -> None:
        module_id, check = self.questions[self.index]
        try:
            answer = self.app.tutoring.read_placement_answer(module_id, check, event.value)
        except AnswerError as exc:
            self.query_one("#status", Static).update(Text(str(exc)))
            return
        self.results.append(answer)
        if self.index + 1 < len(self.questions):
            self.index += 1
            self.show_question()
            return
        report = await self.app.tutoring.take_placement(self.module_id, self.results)
        self.app.pop_screen()
        if report.passed:
            self.app.notify(f"{report.right}/{report.total} right: module {self.module_id} is open.",
                            title="Tested out", timeout=8)
            self.app.open_module(self.module_id)
        else:
            self.app.notify(f"{report.right}/{report.total} right — not enough to skip ahead this time. "
                            "The modules before it will get you there.", severity="warning", timeout=8)
