"""The self-check that closes a module: interview-style questions, one at a time."""

from __future__ import annotations

import time

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Button, Header, Input, Markdown, Static

from tutor.app.screens.draft_keeper import DraftKeeper
from tutor.app.widgets.footer import key_footer
from tutor.app.widgets.page import Page, reveal
from tutor.progress.review import SELF_RATING_WORDS
from tutor.safe_text import inert
from tutor.tutoring.presentation import option_lines, rubric_markdown, self_check_verdict


RATE_HELP = "after a free-text answer: rate yourself against the model answer, 1 (missed it) to 4 (easy)"


class RatingButton(Button):
    """One of the self-ratings (1 missed it .. 4 easy) offered after a free-text answer."""

    def __init__(self, rating: int, word: str, **kwargs):
        super().__init__(f"{rating} {word}", **kwargs)
        self.rating = rating


class SelfCheckScreen(Screen):
    BINDINGS = [
        Binding("ctrl+n", "next", "Next", priority=True, tooltip="next / previous (never automatic)"),
        Binding("ctrl+o", "previous", "Prev", priority=True, tooltip="next / previous (never automatic)"),
        Binding("escape", "map", "Map", priority=True, tooltip="back to the map"),
        Binding("1", "rate(1)", "Missed it", show=False, tooltip=RATE_HELP),
        Binding("2", "rate(2)", "Partly", show=False, tooltip=RATE_HELP),
        Binding("3", "rate(3)", "Got it", show=False, tooltip=RATE_HELP),
        Binding("4", "rate(4)", "Easy", show=False, tooltip=RATE_HELP),
    ]

    def __init__(self, module_id: str, index: int | None = None):
        super().__init__()
        self.module_id = module_id
        module = self.app.session.module(module_id)
        assert module is not None and module.self_checks, f"module {module_id} has no self-check"
        self.module = module
        unanswered = [i for i, c in enumerate(module.self_checks)
                      if not self.app.session.self_check_answered(module_id, c.id)]
        self.index = index if index is not None else (unanswered[0] if unanswered else 0)
        self._clock = time.monotonic()
        self.awaiting_rating = False
        self._answer_seconds = 0.0
        self.drafts = DraftKeeper(self, self._save_draft)  # a free-text answer is kept as it is typed
        self._draft_of = None  # the free-text question the answer box drafts for (None: a letter is no draft)
        self._draft_text = ""  # held here: the box may be gone when the screen unmounts

    def compose(self) -> ComposeResult:
        yield Header()
        with Page(classes="drill-scroll"):
            yield Static("", id="where", classes="where")
            yield Markdown("", id="question")
            yield Static("", id="options")
            yield Input(id="answer")
            yield Static("", id="problem", classes="answer-problem")
            yield Static("", id="status")
            yield Markdown("", id="model-answer")
            with Horizontal(id="rating"):
                for number, word in SELF_RATING_WORDS.items():
                    yield RatingButton(number, word, id=f"rate-{number}")
        yield key_footer()

    def on_mount(self) -> None:
        self.show_question()

    @property
    def check(self):
        return self.module.self_checks[self.index]

    def on_unmount(self) -> None:
        self.drafts.flush()  # leaving, or quitting: what was typed is kept

    def _save_draft(self) -> None:
        if self._draft_of is not None:
            self.app.tutoring.keep_self_check_draft(self.module_id, self._draft_of, self._draft_text)

    @on(Input.Changed, "#answer")
    def _answer_typed(self, event: Input.Changed) -> None:
        if self._draft_of is not None and event.value != self._draft_text:
            self._draft_text = event.value
            self.drafts.changed()

    def show_question(self) -> None:
        self.drafts.flush()  # the question being left keeps its draft
        check = self.check
        slot = self.app.session.slot(self.module_id)
        total = len(self.module.self_checks)
        self.query_one("#where", Static).update(
            Text(f"{self.module_id} · {inert(slot.title)} — self-check {self.index + 1}/{total}"))
        self.query_one("#question", Markdown).update(inert(check.question))
        shown = self.app.tutoring.shown_options(self.module_id, check)  # shuffled when due for review
        self.query_one("#options", Static).update(Text("\n".join(option_lines(shown, "  "))))
        answer = self.query_one("#answer", Input)
        self._draft_of = None if check.is_choice else check
        self._draft_text = self.app.tutoring.self_check_draft(self.module_id, check) if self._draft_of else ""
        answer.value = self._draft_text  # its Changed event is then no change
        answer.placeholder = ("Your answer: a letter" if check.is_choice
                              else "Your answer in a sentence or two, then Enter to see the model answer")
        answer.focus()
        self.query_one("#problem", Static).remove_class("-shown")
        model = self.query_one("#model-answer", Markdown)
        model.update("")
        model.remove_class("-shown")
        self.awaiting_rating = False
        self.query_one("#rating").remove_class("-shown")
        answered = self.app.session.self_check_answered(self.module_id, check.id)
        self.set_status("You answered this before; answer again or ctrl+n." if answered
                        else "Answer as you would in an interview, then press Enter.")
        self._clock = time.monotonic()

    def set_status(self, message: str) -> None:
        self.query_one("#status", Static).update(Text(message))

    @on(Input.Submitted, "#answer")
    async def submit(self, event: Input.Submitted) -> None:
        seconds = time.monotonic() - self._clock
        self.drafts.flush()
        report = await self.app.tutoring.answer_self_check(self.module_id, self.check, event.value, seconds)
        problem = self.query_one("#problem", Static)
        problem.update(Text(report.problem))
        problem.set_class(bool(report.problem), "-shown")
        if report.problem:
            return
        model = self.query_one("#model-answer", Markdown)
        # awaited: its blocks are mounted before the page is scrolled to what follows them
        rubric = rubric_markdown(report.points)
        await model.update(f"### {self_check_verdict(report.correct, report.right_answer)}\n\n" + inert(report.model_answer)
                           + (f"\n\n{rubric}" if rubric else ""))
        model.add_class("-shown")
        self.app.announce_unlocked(report.unlocked)
        if report.needs_rating:  # free text: only the learner can compare with the model answer
            self.awaiting_rating = True
            self._answer_seconds = seconds
            self.query_one("#rating").add_class("-shown")
            self.query_one("#rate-3", Button).focus(scroll_visible=False)
            reveal(self.query_one("#status"), self.query_one("#rating"))  # the model answer and the ratings (80x24)
            self.set_status("How did your answer compare? Press 1 (missed it) to 4 (easy).")
            return
        last = self.index + 1 == len(self.module.self_checks)
        if report.module_done:
            self.set_status(f"Module {self.module_id} is done ✓  ctrl+n returns to the map.")
        elif last:
            self.set_status("That was the last question. ctrl+n returns to the map.")
        else:
            self.set_status("ctrl+n for the next question.")

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "rate":
            return self.awaiting_rating
        return True

    def action_rate(self, rating: int) -> None:
        if not self.awaiting_rating:
            return
        self.app.tutoring.rate_self_check(self.module_id, self.check, rating, self._answer_seconds)
        self.awaiting_rating = False
        self.query_one("#rating").remove_class("-shown")
        last = self.index + 1 == len(self.module.self_checks)
        if self.module_id in self.app.session.progress.done:
            self.set_status(f"Noted. Module {self.module_id} is done ✓  ctrl+n returns to the map.")
        else:
            self.set_status("Noted. " + ("ctrl+n returns to the map." if last else "ctrl+n for the next question."))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if isinstance(event.button, RatingButton):
            self.action_rate(event.button.rating)

    def action_next(self) -> None:
        if self.index + 1 < len(self.module.self_checks):
            self.index += 1
            self.show_question()
        else:
            self.app.back_to_map()

    def action_previous(self) -> None:
        if self.index > 0:
            self.index -= 1
            self.show_question()
        else:
            self.app.open_item(self.module_id, self.module.drills[-1].id)

    def action_map(self) -> None:
        self.app.back_to_map()
