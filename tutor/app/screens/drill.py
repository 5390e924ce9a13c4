"""The drill screen: predict, run, compare, explain; then change one thing and rerun."""

from __future__ import annotations

import time

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Footer, Header, Input, Markdown, RadioButton, RadioSet, Static, TextArea

from tutor.app.screens.lesson_screen import LessonScreen
from tutor.app.widgets.code_view import CodeView
from tutor.app.widgets.result_panel import ResultPanel
from tutor.grading import DrillOutcome, grade, request_for
from tutor.judge import AnswerError, expected_form, parse_answer
from tutor.safe_text import inert
from tutor.progress.store import CONFIDENCE_LEVELS
from tutor.session import code_run_passed


def _option_lines(options: tuple[str, ...]) -> str:
    return "\n".join(f"   {chr(ord('a') + i)}) {inert(o)}" for i, o in enumerate(options))


class DrillScreen(LessonScreen):
    BINDINGS = [
        Binding("ctrl+r", "run", "Run", priority=True),
        Binding("ctrl+g", "hint", "Hint", priority=True),
        Binding("ctrl+e", "edit", "Edit code", priority=True),
        Binding("ctrl+n", "next", "Next", priority=True),
        Binding("ctrl+o", "previous", "Previous", priority=True),
        Binding("escape", "map", "Map", priority=True),
    ]

    phase = reactive("predict")  # predict | running | revealed
    editing = reactive(False, init=False)

    def __init__(self, module_id: str, drill_id: str):
        super().__init__()
        self.module_id = module_id
        module = self.app.session.module(module_id)
        assert module is not None, f"no module {module_id}"
        self.module = module
        drill = module.drill(drill_id)
        assert drill is not None, f"no drill {drill_id} in module {module_id}"
        self.drill = drill
        self.hints_shown = 0
        self.last_answers: dict[str, str] = {}
        self.revealed = False
        self._clock = time.monotonic()

    # ---------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        drill = self.drill
        number = [d.id for d in self.module.drills].index(drill.id) + 1
        slot = self.app.session.slot(self.module_id)
        yield Header()
        with VerticalScroll(classes="drill-scroll"):
            kind = "repair drill" if drill.is_repair else "drill"
            yield Static(Text(f"{self.module_id} · {inert(slot.title)} — {kind} {number}/{len(self.module.drills)}: "
                              f"{inert(drill.title)}"), classes="where")
            yield Markdown(inert(drill.prompt), id="prompt")
            yield CodeView(drill.code, drill.setup, id="code")
            yield TextArea(drill.code, id="editor", soft_wrap=False, show_line_numbers=True, tab_behavior="indent")
            for i, ask in enumerate(drill.asks):
                question = Text(inert(ask.question), style="bold")
                if ask.options:
                    question.append("\n" + _option_lines(ask.options))
                yield Static(question, classes="ask-question")
                yield Input(placeholder=expected_form(ask.kind), id=f"ask-{i}")
                yield Static("", id=f"problem-{i}", classes="answer-problem")
            yield Static("How sure are you? (optional; Tab to reach it, arrows and Space to choose)",
                         id="confidence-label")
            with RadioSet(id="confidence"):
                for level, word in CONFIDENCE_LEVELS.items():
                    yield RadioButton(f"{word}", id=f"confidence-{level}")
            yield Static("", id="status")
            yield ResultPanel(id="result")
            yield Markdown("", id="explanation")
            yield Static("", id="hints")
            yield Markdown("", id="solution")
        yield Footer()

    def on_mount(self) -> None:
        session = self.app.session
        if session.drill_done(self.module_id, self.drill.id):
            self.set_status("You verified this drill before. Predict again, or ctrl+n for the next one.")
        else:
            self.set_status("Type your prediction, say how sure you are (Tab to the choices), and press Enter.")
        self.query_one("#ask-0", Input).focus()

    # ---------------------------------------------------------------- helpers

    def set_status(self, message: str, running: bool = False) -> None:
        status = self.query_one("#status", Static)
        status.update(Text(message))
        status.set_class(running, "-running")

    def _answers(self) -> dict[str, str] | None:
        """The typed answers, or None after marking each one that cannot be read."""
        answers, readable = {}, True
        for i, ask in enumerate(self.drill.asks):
            text = self.query_one(f"#ask-{i}", Input).value
            problem = self.query_one(f"#problem-{i}", Static)
            try:
                parse_answer(ask.kind, text, ask.options)
                problem.update("")
                problem.remove_class("-shown")
            except AnswerError as exc:
                problem.update(Text(str(exc)))
                problem.add_class("-shown")
                if readable:
                    self.query_one(f"#ask-{i}", Input).focus()
                readable = False
            answers[ask.key] = text
        return answers if readable else None

    def confidence(self) -> int | None:
        """How sure the learner said they were (1..3), if they said."""
        pressed = self.query_one("#confidence", RadioSet).pressed_button
        return int(pressed.id.split("-")[1]) if pressed is not None and pressed.id else None

    def _reveal(self) -> None:
        if self.revealed:
            return
        self.revealed = True
        text = "### Why\n\n" + inert(self.drill.explanation)
        if self.drill.gpu_note.strip():
            text += "\n\n### On a GPU — not executed here\n\n" + inert(self.drill.gpu_note)
        explanation = self.query_one("#explanation", Markdown)
        explanation.update(text)
        explanation.add_class("-shown")

    # ---------------------------------------------------------------- actions

    @on(Input.Submitted)
    def next_input_or_run(self, event: Input.Submitted) -> None:
        index = int(event.input.id.split("-")[1])
        if index + 1 < len(self.drill.asks) and not self.query_one(f"#ask-{index + 1}", Input).value.strip():
            self.query_one(f"#ask-{index + 1}", Input).focus()
        else:
            self.action_run()

    def action_run(self) -> None:
        if self.phase == "running":
            return
        if self.editing:
            code = self.query_one("#editor", TextArea).text
            self.phase = "running"
            self.set_status("Running your edited code in the sandbox…", running=True)
            self.run_in_sandbox(self.last_answers, code)
            return
        answers = self._answers()
        if answers is None:
            self.set_status("Some answers could not be read; see the hints under them. Nothing was run.")
            return
        self.phase = "running"
        self.set_status("Running in the sandbox…", running=True)
        self.run_in_sandbox(answers, None)

    @work(exclusive=True, group="sandbox", exit_on_error=False)
    async def run_in_sandbox(self, answers: dict[str, str], code: str | None) -> None:
        seconds = time.monotonic() - self._clock
        try:
            result = await self.app.sandbox.run(request_for(self.drill, code))
            outcome = grade(self.drill, answers, result)
            if code is None:
                self._show_prediction(answers, outcome, seconds)
            else:
                self._show_code_run(code, outcome, seconds)
        except Exception as exc:  # noqa: BLE001 - the learner sees a message, never a traceback
            self.set_status(f"Something went wrong running this drill: {type(exc).__name__}: {exc}")
        finally:
            self._clock = time.monotonic()
            if self.phase == "running":
                self.phase = "revealed" if self.revealed else "predict"

    def _show_prediction(self, answers: dict[str, str], outcome: DrillOutcome, seconds: float) -> None:
        panel = self.query_one("#result", ResultPanel)
        panel.show_outcome(outcome, "Your prediction and what PyTorch did")
        panel.scroll_visible()
        if not outcome.result.ok:
            self.set_status("The run did not finish, so nothing was recorded. " + outcome.result.message)
            return
        self.last_answers = answers
        unlocked = self.app.session.record_prediction(self.module_id, self.drill, answers, outcome, seconds,
                                                      self.confidence())
        self._reveal()
        if outcome.predictions_correct:
            if self.drill.is_repair and not self.app.session.drill_done(self.module_id, self.drill.id):
                self.set_status("Right: that is the symptom. Now repair it: ctrl+e to edit the code, "
                                "ctrl+r to run it until the check passes.")
            else:
                self.set_status("Verified ✓  Change one thing with ctrl+e and rerun, or ctrl+n for the next drill.")
        else:
            self.set_status("Not yet. Read the first divergence and the explanation, change your prediction and "
                            "press Enter again (ctrl+g for a hint).")
        self.app.announce_unlocked(unlocked)

    def _show_code_run(self, code: str, outcome: DrillOutcome, seconds: float) -> None:
        panel = self.query_one("#result", ResultPanel)
        panel.show_outcome(outcome, "Your edited code", graded=False)
        panel.scroll_visible()
        if not outcome.result.ok:
            self.set_status("The run did not finish. " + outcome.result.message)
            return
        repair = self.drill.is_repair
        unlocked = self.app.session.record_code_run(self.module_id, self.drill, code, outcome, seconds,
                                                    "repair" if repair else "experiment")
        if repair:
            if code_run_passed(outcome):
                solution = self.query_one("#solution", Markdown)
                solution.update("### Repaired ✓ — the reference solution\n\n```python\n" +
                                inert(self.drill.solution.rstrip("\n")) + "\n```")
                solution.add_class("-shown")
                if self.app.session.drill_done(self.module_id, self.drill.id):
                    self.set_status("Repaired ✓  The check passes. ctrl+n for the next drill.")
                else:
                    self.set_status("The check passes. Now predict the symptom above too (Escape the editor "
                                    "with ctrl+e) to finish the drill.")
            else:
                self.set_status("The check does not pass yet. Change one thing and run again.")
        else:
            self.set_status("Compare with the first run: what changed, and why? ctrl+e returns to your predictions.")
        self.app.announce_unlocked(unlocked)


    def action_edit(self) -> None:
        if not self.revealed:
            self.notify("Predict and run first; then change one thing and run it again.", timeout=4)
            return
        self.editing = not self.editing

    def watch_editing(self, editing: bool) -> None:
        editor = self.query_one("#editor", TextArea)
        editor.set_class(editing, "-shown")
        if editing:
            editor.focus()
            what = "Repair the code" if self.drill.is_repair else "Change one thing"
            self.set_status(f"{what}, then ctrl+r to run it. ctrl+e goes back to your predictions.")
        else:
            self.query_one("#ask-0", Input).focus()
            self.set_status("Back to your predictions: Enter runs them.")
