"""Test out: a placement drawn from the modules a learner asks to skip, then every answer with why."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Input, Markdown, Static

from tutor.app.widgets.code_view import CodeView
from tutor.app.widgets.footer import key_footer
from tutor.app.widgets.result_panel import prose_text
from tutor.judge import AnswerError
from tutor.placement import PLACEMENT_PASS, PlacementQuestion, PlacementResult, form_of
from tutor.safe_text import inert
from tutor.tutoring.presentation import option_lines
from tutor.tutoring.reports import PlacementReport


class PlacementScreen(Screen):
    BINDINGS = [Binding("escape", "leave", "Give up / done")]

    def __init__(self, module_id: str):
        super().__init__()
        self.module_id = module_id
        self.questions: list[PlacementQuestion] = self.app.session.placement_set(module_id)
        self.index = 0
        self.results: list[PlacementResult] = []
        self.report: PlacementReport | None = None
        self.running = False

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(classes="drill-scroll"):
            yield Static("", id="where", classes="where")
            yield Markdown("", id="question")
            yield CodeView("", id="question-code")  # wrapped, never cut at the screen's edge as a fence was
            yield Static("", id="options")
            yield Input(id="answer")
            yield Static("", id="status")
            yield Static("", id="results")
        yield key_footer()

    def on_mount(self) -> None:
        self.show_question()

    def show_question(self) -> None:
        question = self.questions[self.index]
        slot = self.app.session.slot(self.module_id)
        self.query_one("#where", Static).update(Text(
            f"Test out of the prerequisites of {self.module_id} {inert(slot.title)} — question "
            f"{self.index + 1}/{len(self.questions)} (from module {question.module})"))
        if question.check is not None:
            self.query_one("#question", Markdown).update(inert(question.check.question))
            self.query_one("#question-code", CodeView).show("")
            self.query_one("#options", Static).update(Text("\n".join(option_lines(question.check.options, "  "))))
        else:  # a prediction: the code runs in the sandbox once the learner has answered
            drill = question.drill
            self.query_one("#question", Markdown).update(inert(drill.prompt))
            self.query_one("#question-code", CodeView).show(inert(drill.code), inert(drill.setup))
            # the ask as the drill screen shows it: not Markdown, where "2**24" inside "**…**" lost its stars
            ask = prose_text(inert(question.ask.question), "bold")
            if question.ask.options:
                ask.append("\n" + "\n".join(option_lines(question.ask.options)))
            self.query_one("#options", Static).update(ask)
        answer = self.query_one("#answer", Input)
        answer.placeholder = form_of(question)
        answer.value = ""
        answer.focus()
        self.set_status(f"Answer {PLACEMENT_PASS:.0%} right to open the module directly. Escape gives up.")

    def set_status(self, text: str) -> None:
        self.query_one("#status", Static).update(Text(text))

    @on(Input.Submitted, "#answer")
    def submit(self, event: Input.Submitted) -> None:
        if self.running or self.report is not None:
            return
        self.running = True
        self.set_status("Checking your answer…")
        self.judge_answer(self.questions[self.index], event.value)

    @work(exclusive=True, group="sandbox", exit_on_error=False)
    async def judge_answer(self, question: PlacementQuestion, text: str) -> None:
        try:
            result = await self.app.tutoring.answer_placement(question, text)
        except AnswerError as exc:
            self.set_status(str(exc))
            return
        finally:
            self.running = False
        self.results.append(result)
        if self.index + 1 < len(self.questions):
            self.index += 1
            self.show_question()
            return
        self.report = await self.app.tutoring.take_placement(self.module_id, self.results)
        self.show_results(self.report)

    def show_results(self, report: PlacementReport) -> None:
        self.query_one("#question", Markdown).update("")
        self.query_one("#options", Static).update("")
        self.query_one("#answer", Input).display = False
        lines = Text()
        for i, row in enumerate(report.rows, start=1):
            mark, style = ("✓", "green") if row.correct else ("✗", "red")
            lines.append(f"{mark} {i}. ", style=style)
            lines.append(f"(module {row.module_id}) {inert(row.question)}\n")
            lines.append(f"   you said {inert(row.said)}; right: {inert(row.right_answer)}\n")
            if not row.correct and row.why:
                lines.append(f"   why: {inert(row.why)}\n", style="italic")
        self.query_one("#results", Static).update(lines)
        if report.passed:
            self.set_status(f"{report.right}/{report.total} right: module {self.module_id} is open; modules "
                            f"{', '.join(report.tested_out)} are marked tested out. Escape to go on.")
        else:
            self.set_status(f"{report.right}/{report.total} right — not enough to skip ahead this time (a retry "
                            "asks other questions). Read why above; Escape returns to the map.")
        self.focus()

    def action_leave(self) -> None:
        self.app.pop_screen()
        if self.report is not None and self.report.passed:
            self.app.notify(f"Tested out: module {self.module_id} is open.", timeout=6)
            self.app.open_module(self.module_id)
