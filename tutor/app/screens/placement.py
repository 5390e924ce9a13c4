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
from tutor.tutoring.presentation import option_lines, placement_summary
from tutor.tutoring.reports import PlacementReport


class PlacementScreen(Screen):
    BINDINGS = [Binding("escape", "leave", "Give up / done")]

    def __init__(self, module_id: str):
        super().__init__()
        self.module_id = module_id
        self.questions: list[PlacementQuestion] = self.app.session.placement_set(module_id)
        self.index = 0
        self.ask_index = 0  # a drill question asks every one of its asks, one box after another
        self.answers: dict[str, str] = {}
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
        else:  # a prediction: the code runs in the sandbox once every ask is answered
            drill = question.drill
            self.query_one("#question", Markdown).update(inert(drill.prompt))
            self.query_one("#question-code", CodeView).show(inert(drill.code), inert(drill.setup))
        self.ask_index, self.answers = 0, {}
        self.show_ask()
        self.set_status(f"Each module you skip answers its own questions: {PLACEMENT_PASS:.0%} of them right marks "
                        "it tested out. Escape gives up.")

    def show_ask(self) -> None:
        question = self.questions[self.index]
        ask = question.asks[self.ask_index] if question.check is None else None
        if ask is not None:
            # the ask as the drill screen shows it: not Markdown, where "2**24" inside "**…**" lost its stars
            shown = prose_text(inert(ask.question), "bold")
            if len(question.asks) > 1:
                shown = Text(f"({self.ask_index + 1}/{len(question.asks)}) ").append_text(shown)
            if ask.options:
                shown.append("\n" + "\n".join(option_lines(ask.options)))
            self.query_one("#options", Static).update(shown)
        answer = self.query_one("#answer", Input)
        answer.placeholder = form_of(question, ask)
        answer.value = ""
        answer.focus()

    def set_status(self, text: str) -> None:
        self.query_one("#status", Static).update(Text(text))

    @on(Input.Submitted, "#answer")
    def submit(self, event: Input.Submitted) -> None:
        if self.running or self.report is not None:
            return
        question = self.questions[self.index]
        if question.check is None:
            ask = question.asks[self.ask_index]
            read = self.app.tutoring.read_answers(question.drill, {ask.key: event.value})[ask.key]
            if not read.readable:  # said at once, on this ask's box; nothing runs
                self.set_status(read.problem)
                return
            self.answers[ask.key] = event.value
            if self.ask_index + 1 < len(question.asks):
                self.ask_index += 1
                self.show_ask()
                return
        self.running = True
        self.set_status("Checking your answer…")
        self.judge_answer(question, event.value if question.check is not None else dict(self.answers))

    @work(exclusive=True, group="sandbox", exit_on_error=False)
    async def judge_answer(self, question: PlacementQuestion, text: str | dict[str, str]) -> None:
        try:
            result = await self.app.tutoring.answer_placement(question, text)
        except AnswerError as exc:
            self.set_status(str(exc))
            self.ask_index, self.answers = 0, {}  # asked again from its first ask
            self.show_ask()
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
        self.set_status(placement_summary(report) + " Escape to go on.")
        self.focus()

    def action_leave(self) -> None:
        self.app.pop_screen()
        if self.report is not None and self.report.passed:
            self.app.notify(f"Tested out: module {self.module_id} is open.", timeout=6)
            self.app.open_module(self.module_id)
