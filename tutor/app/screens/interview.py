"""Interview mode in the app: a timed, mixed mock interview, then its debrief (see :mod:`tutor.interview`).

One screen, one answer box, a phase at a time: the length and the scope (unless the command line gave
them), then each question's answers (a repair in the code editor, ctrl+r submits it), the confidence,
a free text's self-rating against the model answer and its rubric, the verdict and the mechanism, and
after the last question the debrief (ctrl+s keeps it as a Markdown file). The clock ticks in the header
line above the question; limits are soft.
"""

from __future__ import annotations

import time
from typing import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Input, Markdown, Static

from tutor.app.widgets.code_editor import CodeEditor
from tutor.app.widgets.code_view import CodeView
from tutor.app.widgets.footer import key_footer
from tutor.app.widgets.page import reveal
from tutor.app.widgets.result_panel import prose_text
from tutor.interview.debrief import debrief, markdown
from tutor.interview.plan import LENGTHS, QuestionKind, Scope, scopes
from tutor.interview.run import Answered, Interview, Question
from tutor.judge import AnswerError, expected_form, parse_answer
from tutor.locations import data_dir, inside
from tutor.progress.review import SELF_RATING_WORDS
from tutor.progress.store import CONFIDENCE_LEVELS
from tutor.safe_text import inert
from tutor.tutoring.presentation import option_lines, rubric_markdown
from tutor.wording import count

CONFIDENCE_PROMPT = "How sure are you? " + " ".join(f"{n} {w}" for n, w in CONFIDENCE_LEVELS.items()) + \
    " (Enter skips)"
RATING_PROMPT = "Compared with the model answer and its points: " + \
    " ".join(f"{n} {w}" for n, w in SELF_RATING_WORDS.items())


class InterviewScreen(Screen):
    BINDINGS = [
        Binding("escape", "leave", "End", priority=True, tooltip="end the interview (what you answered is kept) "
                                                                 "and see its debrief; again: back to the map"),
        Binding("ctrl+r", "submit_code", "Submit repair", priority=True, tooltip="submit the repaired code"),
        Binding("ctrl+s", "save", "Save debrief", priority=True, tooltip="keep the debrief as a Markdown file"),
    ]

    def __init__(self, minutes: int | None = None, scope: str | None = None,
                 clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.clock = clock  # the interview's clock (a test's own, to play a whole interview at once)
        self.minutes = minutes
        self.scope_key = scope
        session = self.app.session
        self.offered: list[Scope] = [s for s in scopes(session.course, session.progress.done |
                                                       session.progress.tested_out) if s.modules]
        self.interview: Interview | None = None
        self.question: Question | None = None
        self.phase = "length"  # set_phase() from here on: the footer follows it
        self.texts: dict[str, str] = {}
        self.ask_index = 0
        self.busy = False
        self.report_text = ""  # the debrief, once the interview is over

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(classes="drill-scroll"):
            yield Static("", id="clock", classes="where")
            yield Static("", id="where", classes="where")
            yield Markdown("", id="question")
            yield CodeView("", id="question-code")
            yield Markdown("", id="feedback")  # the verdict, a model answer, the debrief: above the next prompt
            yield Static("", id="prompt")
            yield Input(id="answer")
            yield CodeEditor.python("", id="code")
            yield Static("", id="status")
        yield key_footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """ctrl+r only while a repair is asked, ctrl+s only beside a debrief (the footer shows what works now)."""
        if action == "submit_code":
            return self.phase == "repair"
        if action == "save":
            return self.phase == "done" and bool(self.report_text)
        return True

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        self.refresh_bindings()

    def on_mount(self) -> None:
        self.query_one("#code", CodeEditor).display = False
        self.query_one("#question-code", CodeView).display = False
        self.query_one("#where", Static).update(Text("Mock interview"))
        self.set_interval(1.0, self.tick)
        if not self.offered:
            self.set_status("There is nothing to interview on yet: no module is written. Escape to go back.")
            self.query_one("#answer", Input).display = False
            return
        if self.minutes is None:
            self.prompt(f"Interview length in minutes: {', '.join(map(str, LENGTHS))} (Enter: {LENGTHS[0]})", "15")
        else:
            self.ask_scope()

    # ---------------------------------------------------------------- set-up

    def ask_scope(self) -> None:
        by_key = {s.key: s for s in self.offered}
        if self.scope_key in by_key:
            self.start(by_key[self.scope_key])
            return
        self.set_phase("scope")
        lines = "\n".join(f"  {s.key} — {inert(s.title)} ({count(len(s.modules), 'module')})" for s in self.offered)
        self.prompt(f"Scope (Enter: {self.offered[0].key}):\n{lines}", self.offered[0].key)

    def start(self, scope: Scope) -> None:
        self.interview = Interview(self.app.tutoring, scope, self.minutes, clock=self.clock)
        self.set_status(f"{self.minutes} minutes on {inert(scope.title)}. Time is soft: an answer after a "
                        "question's limit still counts. Escape ends the interview.")
        self.next_question()

    # ---------------------------------------------------------------- questions

    def next_question(self) -> None:
        self.query_one("#feedback", Markdown).update("")
        self.question = self.interview.next_question()
        if self.question is None:
            self.finish()
            return
        question = self.question
        self.texts, self.ask_index = {}, 0
        self.query_one("#where", Static).update(Text(f"Question {question.number} — {question.words} "
                                                     f"(module {question.module})"))
        code_view = self.query_one("#question-code", CodeView)
        if question.check is not None:
            self.query_one("#question", Markdown).update(inert(question.check.question))
            code_view.display = False
        else:
            self.query_one("#question", Markdown).update(inert(question.drill.prompt))
            code_view.show(inert(question.drill.code), inert(question.drill.setup))
            code_view.display = question.kind is not QuestionKind.REPAIR  # a repair's code is in the editor
        self.tick()
        if question.kind is QuestionKind.REPAIR:
            self.set_phase("repair")
            self.query_one("#prompt", Static).update(Text("Repair the code below, then ctrl+r to submit it."))
            self.query_one("#answer", Input).display = False
            editor = self.query_one("#code", CodeEditor)
            editor.text = question.drill.code
            editor.display = True
            editor.focus()
            return
        self.query_one("#code", CodeEditor).display = False
        if question.kind in (QuestionKind.PREDICT, QuestionKind.TRIAGE):
            self.set_phase("ask")
            self.show_ask()
        elif question.kind is QuestionKind.CHOICE:
            self.set_phase("choice")
            self.prompt("\n".join(option_lines(question.check.options)), "a letter")
        else:
            self.set_phase("explain")
            self.prompt("Answer as you would to an interviewer.", "your answer")

    def show_ask(self) -> None:
        ask = self.question.drill.asks[self.ask_index]
        shown = prose_text(inert(ask.question), "bold")
        if len(self.question.drill.asks) > 1:
            shown = Text(f"({self.ask_index + 1}/{len(self.question.drill.asks)}) ").append_text(shown)
        if ask.options:
            shown.append("\n" + "\n".join(option_lines(ask.options)))
        self.query_one("#prompt", Static).update(shown)
        self.reset_answer(expected_form(ask.kind))

    def prompt(self, text: str, placeholder: str) -> None:
        self.query_one("#prompt", Static).update(Text(text))
        self.reset_answer(placeholder)

    def reset_answer(self, placeholder: str) -> None:
        answer = self.query_one("#answer", Input)
        answer.display = True
        answer.placeholder = placeholder
        answer.value = ""
        answer.focus(scroll_visible=False)
        # in view after the next layout: a question from its top down to the box (its top when taller than the
        # page, as at 80x24: PageDown reaches the box), a later ask or a verdict from its line down to the box
        first = self.ask_index == 0 and self.phase in ("ask", "choice", "explain", "length", "scope")
        reveal(self.query_one("#where" if first else "#prompt"), answer)

    def set_status(self, text: str) -> None:
        self.query_one("#status", Static).update(Text(text))

    def tick(self) -> None:
        if self.interview is not None and self.report_text == "":
            self.query_one("#clock", Static).update(Text(self.interview.time_line()))

    # ---------------------------------------------------------------- answers

    @on(Input.Submitted, "#answer")
    def submitted(self, event: Input.Submitted) -> None:
        if self.busy:
            return
        typed = event.value
        handler = getattr(self, f"phase_{self.phase}", None)
        if handler is not None:
            self.set_status("")  # the last problem is answered or said again by the handler
            handler(typed)

    def phase_length(self, typed: str) -> None:
        typed = typed.strip()
        if typed and not (typed.isdigit() and int(typed) in LENGTHS):
            self.set_status(f"Type {', '.join(map(str, LENGTHS[:-1]))} or {LENGTHS[-1]}.")
            return
        self.minutes = int(typed) if typed else LENGTHS[0]
        self.ask_scope()

    def phase_scope(self, typed: str) -> None:
        by_key = {s.key: s for s in self.offered}
        typed = typed.strip().lower() or self.offered[0].key
        if typed not in by_key:
            self.set_status(f"Type one of: {', '.join(by_key)}.")
            return
        self.start(by_key[typed])

    def phase_ask(self, typed: str) -> None:
        drill = self.question.drill
        ask = drill.asks[self.ask_index]
        read = self.app.tutoring.read_answers(drill, {ask.key: typed})[ask.key]
        if not read.readable:
            self.set_status(read.problem)
            return
        self.texts[ask.key] = typed
        if self.ask_index + 1 < len(drill.asks):
            self.ask_index += 1
            self.show_ask()
            return
        self.set_phase("confidence")
        self.prompt(CONFIDENCE_PROMPT, "1, 2, 3 or Enter")

    def phase_choice(self, typed: str) -> None:
        try:  # read now (an empty box is no answer): the confidence comes after a letter
            parse_answer("choice", typed, self.question.check.options)
        except AnswerError as exc:
            self.set_status(str(exc))
            return
        self.texts = {"choice": typed}
        self.set_phase("choice_confidence")
        self.prompt(CONFIDENCE_PROMPT, "1, 2, 3 or Enter")

    def read_confidence(self, typed: str) -> tuple[bool, int | None]:
        typed = typed.strip()
        if typed and typed not in ("1", "2", "3"):
            self.set_status("Type 1, 2 or 3, or press Enter.")
            return False, None
        return True, int(typed) if typed else None

    def phase_confidence(self, typed: str) -> None:
        ok, confidence = self.read_confidence(typed)
        if ok:
            self.judge(self.interview.answer_prediction(dict(self.texts), confidence))

    def phase_choice_confidence(self, typed: str) -> None:
        ok, confidence = self.read_confidence(typed)
        if not ok:
            return
        try:
            answered = self.interview.answer_choice(self.texts["choice"], confidence)
        except AnswerError as exc:
            self.set_status(str(exc))
            self.set_phase("choice")
            self.prompt("\n".join(option_lines(self.question.check.options)), "a letter")
            return
        self.show_verdict(answered)

    def phase_explain(self, typed: str) -> None:
        try:
            shown = self.interview.answer_explain(typed)
        except AnswerError as exc:
            self.set_status(str(exc))
            return
        rubric = rubric_markdown(shown.points)
        self.query_one("#feedback", Markdown).update(
            "### Model answer\n\n" + inert(shown.model_answer) + (f"\n\n{rubric}" if rubric else ""))
        self.set_phase("rating")
        self.prompt(RATING_PROMPT, "1 to 4")
        self.show_feedback()

    def phase_rating(self, typed: str) -> None:
        typed = typed.strip()
        if typed not in ("1", "2", "3", "4"):
            self.set_status("Type a number from 1 to 4.")
            return
        self.show_verdict(self.interview.rate(int(typed)), keep_feedback=True)

    def phase_next(self, typed: str) -> None:
        self.next_question()

    def action_submit_code(self) -> None:
        if self.phase == "repair" and not self.busy:
            self.judge(self.interview.answer_repair(self.query_one("#code", CodeEditor).text))

    @work(exclusive=True, group="sandbox", exit_on_error=False)
    async def judge(self, action) -> None:
        self.busy = True
        self.set_status("Running in the sandbox…")
        try:
            answered = await action
        except AnswerError as exc:
            self.set_status(str(exc))
            if self.phase == "confidence":  # an unreadable prediction: asked again from its first ask
                self.set_phase("ask")
                self.texts, self.ask_index = {}, 0
                self.show_ask()
            return
        finally:
            self.busy = False
        self.show_verdict(answered)

    def show_verdict(self, answered: Answered, keep_feedback: bool = False) -> None:
        over = f" (over its {answered.question.limit // 60}-minute limit: it still counts)" if answered.over_limit else ""
        if answered.correct is None:
            verdict = f"Not judged: {inert(answered.not_judged)}"
        else:
            verdict = ("Right" if answered.correct else "Wrong") + f" — {int(answered.seconds)} s{over}."
        parts = [f"### {verdict}"]
        if answered.correct is False and answered.right_answer:
            parts.append(f"The reference repair:\n\n```python\n{inert(answered.right_answer)}\n```"
                         if answered.question.kind is QuestionKind.REPAIR
                         else f"Right answer: `{inert(answered.right_answer)}`")
        if answered.correct is False and answered.why:
            parts.append(f"Why: {inert(answered.why)}")
        if answered.explanation:
            parts.append(f"Mechanism: {inert(answered.explanation)}")
        elif answered.model_answer and answered.correct is False and not keep_feedback:
            parts.append(f"Model answer: {inert(answered.model_answer)}")
        feedback = self.query_one("#feedback", Markdown)
        if keep_feedback:  # a free text: the verdict above the model answer it was rated against
            self.set_status(verdict)
        else:
            feedback.update("\n\n".join(parts))
            self.set_status("")
        self.query_one("#code", CodeEditor).display = False
        self.set_phase("next")
        self.prompt("Enter for the next question.", "Enter")
        self.show_feedback()

    def show_feedback(self) -> None:
        """After the next layout: the verdict (or model answer) down to the box that waits, in view (80x24)."""
        reveal(self.query_one("#feedback"), self.query_one("#answer"))

    # ---------------------------------------------------------------- the debrief

    def finish(self) -> None:
        interview = self.interview
        self.set_phase("done")
        self.query_one("#answer", Input).display = False
        self.query_one("#code", CodeEditor).display = False
        for selector in ("#question", "#feedback"):
            self.query_one(selector, Markdown).update("")
        self.query_one("#question-code", CodeView).display = False
        self.query_one("#prompt", Static).update("")
        self.query_one("#where", Static).update(Text("Time is up." if interview.remaining <= 0 else
                                                     "The interview is over."))
        session = self.app.session
        found = debrief(session.course, session.store.attempts(), interview.id)
        if found is None:
            self.report_text = "No question was answered, so there is no debrief.\n"
        else:
            self.report_text = markdown(found, interview.scope.title)
        self.query_one("#clock", Static).update("")
        self.query_one("#feedback", Markdown).update(self.report_text)
        self.query_one(VerticalScroll).scroll_home(animate=False)
        self.set_status("ctrl+s keeps this debrief as a Markdown file · Escape: back to the map")
        self.focus()

    def action_save(self) -> None:
        if not self.report_text or self.interview is None:
            return
        folder = data_dir() / "interviews"
        folder.mkdir(parents=True, exist_ok=True)
        path = inside(folder, f"{self.app.profile_name}-{self.interview.id}.md")
        path.write_text(self.report_text, encoding="utf-8")
        self.set_status(f"Saved: {path}")
        self.app.notify(f"The debrief is saved at {path}", timeout=8)

    def action_leave(self) -> None:
        if self.phase == "done" or self.interview is None:
            self.app.pop_screen()
            return
        self.interview.current = None  # the question on screen is left unanswered
        self.finish()
