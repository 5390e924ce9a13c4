"""The drill screen: predict, run, compare, explain; then change one thing and rerun."""

from __future__ import annotations

import time

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.actions import SkipAction
from textual.binding import Binding
from textual.reactive import reactive
from textual.widgets import Header, Input, Markdown, RadioSet, Static, TextArea

from tutor.app.widgets.answer_form import AnswerInput, ConfidenceButton, ConfidenceChoice
from tutor.app.widgets.footer import key_footer
from tutor.app.messages import CodeSubmitted, PredictionSubmitted
from tutor.app.screens.draft_keeper import DraftKeeper
from tutor.app.screens.drill_symptoms import SymptomsFirst
from tutor.app.screens.drill_status import BOX_BELOW, NOT_YET_FRESH, STATUS
from tutor.app.screens.lesson_screen import LessonScreen
from tutor.app.widgets.code_editor import EDITOR_KEYS, CodeEditor
from tutor.app.widgets.code_view import CodeView
from tutor.app.widgets.page import Page, reveal
from tutor.app.widgets.result_panel import ResultPanel, prose_text
from tutor.app.widgets.trace_panel import NOT_YET, TracePanel
from tutor.app.widgets.view_prompt import VIEW_KEY_HELP, ViewPanel, ViewPrompt, ViewSubmitted
from tutor.judge import ReadAnswer, expected_form
from tutor.progress.store import CONFIDENCE_LEVELS, AttemptKind
from tutor.plain.text import without_not_executed
from tutor.safe_text import inert
from tutor.tutoring.presentation import option_lines
from tutor.tutoring.reports import RunReport, ViewReport
from tutor.tutoring.states import Outcome
from tutor.tutoring.view_blocks import viewable_names
from tutor.wording import drill_label


class DrillScreen(SymptomsFirst, LessonScreen):
    BINDINGS = [
        Binding("ctrl+r", "run_typed", "Run", priority=True,
                tooltip="run with your predictions, or your edited code while the editor is open"),
        Binding("ctrl+g", "hint", "Hint", priority=True, tooltip="the next hint (hints come in tiers)"),
        Binding("ctrl+e", "edit", "Edit", priority=True,
                tooltip="edit the code: change one thing and rerun; in a repair drill, fix the bug; "
                        "again: back to your predictions"),
        # not in the footer (at 80 columns it pushed "Quit" and "Help" off the edge): the line under the editor says it
        Binding("ctrl+t", "reset_code", "Reset code", priority=True, show=False,
                tooltip="the drill's own code back in the editor (your edits are kept per drill until then)"),
        Binding("f4", "trace", "Trace", priority=True,
                tooltip="after the first run: show / hide the trace, every tensor after every line"),
        Binding("ctrl+l", "view", "View", priority=True, tooltip=VIEW_KEY_HELP),
        # only on a drill with variants (check_action): another instance, its shapes or values drawn afresh; not in
        # the footer (80 columns), the status line names it after a wrong answer
        Binding("f5", "fresh_instance", "New instance", priority=True, show=False,
                tooltip="a fresh instance of this drill to predict: after a wrong answer, the one that verifies it"),
        Binding("ctrl+n", "next", "Next", priority=True, tooltip="next / previous (never automatic)"),
        Binding("ctrl+o", "previous", "Prev", priority=True, tooltip="next / previous (never automatic)"),
        Binding("escape", "map", "Map", priority=True, tooltip="back to the map"),
        # Enter and Tab in an answer box move the focus as the app reads the key, before it hands on the
        # next one: handled by the box, the move came after keys already queued for it (issue 36 item 1)
        Binding("enter", "answer_entered", show=False, priority=True),
        Binding("tab", "box_step(1)", show=False, priority=True),
        Binding("shift+tab", "box_step(-1)", show=False, priority=True),
    ]

    phase = reactive("predict")  # predict | running | revealed (the explanation is shown)
    editing = reactive(False, init=False)

    def __init__(self, module_id: str, drill_id: str):
        super().__init__()
        self.module_id = module_id
        module = self.app.session.module(module_id)
        assert module is not None, f"no module {module_id}"
        self.module = module
        drill = module.drill(drill_id)
        assert drill is not None, f"no drill {drill_id} in module {module_id}"
        # due for review: recall, with nothing of the earlier tries on screen; a drill with variants opens on an
        # instance whose answers were never shown (tutor.tutoring.instances)
        self.in_review = self.app.tutoring.in_review(module_id, drill)
        self.drill = self.app.tutoring.present(module_id, drill)
        self.source_hidden = self.app.tutoring.hides_source(module_id, self.drill)  # a symptoms-first repair
        self._shown: dict[str, str] = {}  # what the boxes held when the drill opened
        self.hints_shown = 0
        self.last_said: dict[str, ReadAnswer] = {}  # the last predictions recorded, shown beside experiments
        self._submitted: dict[str, ReadAnswer] = {}
        self.revealed = False
        self._clock = time.monotonic()
        self.drafts = DraftKeeper(self, self._save_drafts)
        self._code_typed = False

    # ---------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        drill = self.drill
        number = [d.id for d in self.module.drills].index(drill.id) + 1
        slot = self.app.session.slot(self.module_id)
        yield Header()
        with Page(classes="drill-scroll"):
            kind = drill_label(drill)
            yield Static(Text(f"{self.module_id} · {inert(slot.title)} — {kind} {number}/{len(self.module.drills)}: "
                              f"{inert(drill.title)}"), classes="where")
            yield Markdown(inert(drill.prompt), id="prompt")
            yield ResultPanel(id="symptoms")  # a symptoms-first repair's output, its source hidden until diagnosed
            yield CodeView(*self.shown_source(), id="code")
            yield CodeEditor.python(self.shown_source()[0], id="editor")
            yield Static(Text("ctrl+t: the drill's own code back · " + EDITOR_KEYS, style="dim"), id="editor-keys")
            for i, ask in enumerate(drill.asks):
                question = prose_text(inert(ask.question), "bold")
                if ask.options:
                    question.append("\n" + "\n".join(option_lines(ask.options)))
                yield Static(question, classes="ask-question")
                box = AnswerInput(i, ask.key, placeholder=expected_form(ask.kind), id=f"ask-{i}")
                yield box
                yield box.problem
            yield Static("How sure are you? (optional: Tab here, then arrows or Space choose; Enter runs)",
                         id="confidence-label")
            with ConfidenceChoice(id="confidence"):
                for level, word in CONFIDENCE_LEVELS.items():
                    yield ConfidenceButton(level, word, id=f"confidence-{level}")
            yield Static("", id="status")
            yield ResultPanel(id="result")
            yield TracePanel(id="trace")
            yield ViewPanel(id="view")
            yield Markdown("", id="explanation")
            yield Static("", id="hints")
            yield Markdown("", id="solution")
        yield key_footer()

    def on_mount(self) -> None:
        service, session = self.app.tutoring, self.app.session
        before = None if self.in_review else service.last_verified(self.module_id, self.drill)
        if self.in_review:  # empty boxes; the old result and explanation stay hidden until this run
            self.set_status("Due for review: predict from memory what PyTorch will do, then press Enter. Your "
                            "earlier answers and the explanation come back after the run.")
        elif before is not None:  # revisited: verified, with the answers that did it; try again at will
            for box in self.query(AnswerInput):
                box.value = before.said.get(box.key, "")
            self.last_said = self.app.tutoring.read_answers(self.drill, before.said)
            panel = self.query_one("#result", ResultPanel)
            panel.show_report(before, "You verified this drill: your answers and what PyTorch did")
            self._reveal()
            self.set_status("Verified ✓ before. Change an answer and press Enter to try again, ctrl+e to "
                            "change the code, or ctrl+n for the next drill.")
        elif self.drill.variants is not None and session.attempted(self.module_id, self.drill.id):
            # an instance never answered (present() saw to it): nothing of the earlier instances on screen
            self.set_status("A fresh instance of this drill: its shapes or values differ from the one you answered. "
                            "Predict it and press Enter; a right prediction verifies the drill.")
        elif session.attempted(self.module_id, self.drill.id):
            # an experiment shows these beside its run ("your last answer"), in a relaunched app too
            self.last_said = service.read_answers(self.drill, service.last_predicted(self.module_id, self.drill))
            self._reveal(explain=not self.drill.is_repair)
            self.set_status("You tried this before. Predict again and press Enter.")
        else:
            self.set_status("Type your prediction, say how sure you are (Tab to the choices), and press Enter.")
        if service.code_for(self.module_id, self.drill) != self.drill.code:
            self.query_one("#code", CodeView).edited = not self.source_hidden
        self._boxes, self._editor = list(self.query(AnswerInput)), self.query_one("#editor", TextArea)
        kept = {} if self.in_review else service.draft_answers(self.module_id, self.drill)
        if kept:  # typed here before (this session or an earlier one) and not verified since
            for box in self.query(AnswerInput):
                box.value = kept.get(box.key, box.value)
            self.set_status("Your answers from last time are back in the boxes: change any, or press Enter to run them.")
        self._saved = {box.key: box.value for box in self._boxes}  # what the profile holds (or needs not hold)
        self._shown = dict(self._saved)
        # the page opens at its top (the prompt first, at 80x24 too); typing into the box brings it into view
        self.query_one("#ask-0", Input).focus(scroll_visible=False)
        self.call_after_refresh(self._say_where_the_box_is)
        self.open_symptoms()

    def _say_where_the_box_is(self) -> None:
        """A box below the fold has the focus: say so, so the learner does not type into what they cannot see."""
        box, page = self.query_one("#ask-0", Input), self.query_one(Page)
        if box.has_focus and box.region.y + 1 >= page.region.bottom:  # its text row (inside the border) unseen
            self.set_status(self.status_text + "\n" + BOX_BELOW)

    def on_unmount(self) -> None:
        self.drafts.flush()  # leaving the drill, or quitting: what was typed is kept

    def _save_drafts(self) -> None:
        """The boxes and the editor as they are (held from mount: they are read while the screen unmounts)."""
        service = self.app.tutoring
        now = {box.key: box.value for box in self._boxes}
        changed = {key: text for key, text in now.items() if self._saved.get(key, "") != text}
        if changed:  # only what the learner changed: boxes filled from a verified attempt are no drafts
            service.keep_answers(self.module_id, self.drill, changed)
            self._saved = now
        if self._code_typed:  # only what was typed: the editor holds the drill's own code until it is opened
            self._code_typed = False
            service.keep_code(self.module_id, self.drill, self._editor.text)

    @on(Input.Changed)
    def _answer_typed(self, event: Input.Changed) -> None:
        if isinstance(event.input, AnswerInput):
            self.drafts.changed()

    @on(Input.Blurred)
    def _answer_left(self, event: Input.Blurred) -> None:
        if isinstance(event.input, AnswerInput):  # Enter or Tab to the next box: this one is kept now
            self.drafts.flush()

    # ---------------------------------------------------------------- helpers

    def _read(self) -> dict[str, ReadAnswer] | None:
        """The typed answers read once, or None after marking each one that cannot be read."""
        texts = {box.key: box.value for box in self.query(AnswerInput)}
        said = self.app.tutoring.read_answers(self.drill, texts)
        first_unreadable = None
        for box in self.query(AnswerInput):
            problem = box.problem
            answer = said[box.key]
            problem.update(Text(answer.problem))
            problem.set_class(not answer.readable, "-shown")
            if not answer.readable and first_unreadable is None:
                first_unreadable = box
        if first_unreadable is not None:  # the box and why, both in view: what is typed next lands there
            first_unreadable.focus(scroll_visible=False)
            reveal(first_unreadable, first_unreadable.problem)
            return None
        return said

    def confidence(self) -> int | None:
        """How sure the learner said they were (1..3), if they said."""
        pressed = self.query_one("#confidence", RadioSet).pressed_button
        return pressed.level if isinstance(pressed, ConfidenceButton) else None

    def _reveal(self, explain: bool = True) -> None:
        """After the first prediction: the learner may edit now; ``explain`` shows the explanation too.

        A repair drill's explanation names the bug and so the fix: it waits until the drill is done.
        """
        self.revealed = True
        if explain:
            self._explain()

    def _explain(self) -> None:
        if self.query_one("#explanation", Markdown).has_class("-shown"):
            return
        text = "### Why\n\n" + inert(self.drill.explanation)
        if self.drill.gpu_note.strip():
            text += "\n\n### On a GPU — not executed here\n\n" + without_not_executed(inert(self.drill.gpu_note))
        explanation = self.query_one("#explanation", Markdown)
        explanation.update(text)
        explanation.add_class("-shown")

    # ---------------------------------------------------------------- actions

    def action_answer_entered(self) -> None:
        """Enter in an answer box: the next empty box now, or run once this box has taken what was typed."""
        box = self.focused
        if not isinstance(box, AnswerInput):
            raise SkipAction()  # the editor's newline, the confidence row's run, …: theirs
        boxes = list(self.query(AnswerInput))
        if box.index + 1 < len(boxes) and not boxes[box.index + 1].value.strip():
            self.set_focus(boxes[box.index + 1], scroll_visible=False)
            reveal(boxes[box.index + 1])
        else:
            box.call_later(self.action_run)  # after the keys still queued for the box: all of them in its value

    def action_run_typed(self) -> None:
        """ctrl+r: run once the focused box or editor has taken every key typed before it."""
        target = self.focused or self
        target.call_later(self.action_run)

    def action_box_step(self, step: int) -> None:
        """Tab / shift+tab, as the screen's own binding does, but as the key is read (see BINDINGS)."""
        self.focus_next() if step > 0 else self.focus_previous()

    @on(Input.Submitted)
    def next_input_or_run(self, event: Input.Submitted) -> None:
        boxes, box = list(self.query(AnswerInput)), event.input
        if isinstance(box, AnswerInput) and box.index + 1 < len(boxes) and not boxes[box.index + 1].value.strip():
            boxes[box.index + 1].focus()
        else:
            self.action_run()

    def action_run(self) -> None:
        if self.phase == "running":
            return
        self.drafts.flush()
        seconds = time.monotonic() - self._clock
        if self.editing:
            code = self.query_one("#editor", TextArea).text
            kind = AttemptKind.REPAIR if self.drill.is_repair else AttemptKind.EXPERIMENT
            self.phase = "running"
            self.set_status("Running your edited code in the sandbox…", running=True)
            self.post_message(CodeSubmitted(self.module_id, self.drill, code, seconds, kind, self.last_said))
            return
        if self.app.tutoring.instance_already_answered(self.module_id, self.drill):
            self.set_status(STATUS[Outcome.FRESH_INSTANCE])  # its answers are on screen: nothing to predict
            return
        texts = {box.key: box.value for box in self.query(AnswerInput)}
        if self.app.tutoring.nothing_recalled(self.module_id, self.drill, texts, self._shown):
            self.set_status(STATUS[Outcome.RECALL_NEEDED])  # said before any box's own problem
            return
        said = self._read()
        if said is None:
            self.set_status(STATUS[Outcome.UNREADABLE])
            return
        self.phase = "running"
        self.set_status("Running in the sandbox…", running=True)
        self._submitted = said
        self.post_message(PredictionSubmitted(self.module_id, self.drill, said, seconds, self.confidence(),
                                              shown=self._shown))
        self.query_one("#confidence", ConfidenceChoice).clear()  # each try states its own confidence

    def action_fresh_instance(self) -> None:
        """A fresh instance: the screen opens again on it, boxes empty, nothing of the last instance shown."""
        if self.drill.variants is None or self.phase == "running":
            return
        self.drafts.flush()
        self.app.tutoring.fresh_instance(self.module_id, self.drill)
        self.app.switch_screen(DrillScreen(self.module_id, self.drill.id))

    def after_failure(self) -> None:
        self._finished()

    def _finished(self) -> None:
        self._clock = time.monotonic()
        if self.phase == "running":
            self.phase = "revealed" if self.revealed else "predict"

    def heading(self, report: RunReport) -> str:
        return "Your prediction and what PyTorch did" if report.kind == AttemptKind.PREDICTION else "Your edited code"

    def show(self, report: RunReport) -> None:
        trace = self.query_one("#trace", TracePanel)
        code = report.said.get("code") if report.kind != AttemptKind.PREDICTION else None
        if report.trace is not None:  # a first-divergence drill's run: its trace, the first failure marked
            trace.show_trace(report.trace, code, scroll=False)  # the result first
        elif trace.shown and code is not None and trace.source != code:
            # A trace on screen is of the code that just ran, never of the run before it
            trace.fetch(self.app.tutoring, self.drill, code, scroll=False)
        if report.kind == AttemptKind.PREDICTION and report.recorded is not None:
            self.last_said = self._submitted
            self._reveal(explain=not self.drill.is_repair or report.drill_done)
            self.reveal_source(report)
        if report.outcome in (Outcome.REPAIRED, Outcome.REPAIRED_PREDICT_NEXT):
            self.show_solution("Repaired ✓ — the reference solution")
        if self.drill.is_repair and report.drill_done:
            self._explain()
        if report.outcome == Outcome.NOT_FINISHED:
            self.set_status(f"{report.not_recorded} {report.message}")
        elif report.outcome == Outcome.NOT_YET and self.drill.variants is not None:
            self.set_status(NOT_YET_FRESH)
        else:
            self.set_status(STATUS[report.outcome])
        self._focus_after(report)
        self._finished()

    def _focus_after(self, report: RunReport) -> None:
        """Where the next key goes while the report is read, without scrolling away from it.

        A wrong prediction: its box, text selected, so typing replaces it (and brings the box back);
        the editor, while editing; otherwise the page, so arrows and PageDown read on.
        """
        if self.editing:
            self.query_one("#editor", TextArea).focus(scroll_visible=False)
            return
        if report.kind == AttemptKind.PREDICTION and report.outcome == Outcome.NOT_YET:
            wrong = {row.key for row in report.rows if not row.correct}
            box = next((b for b in self.query(AnswerInput) if b.key in wrong), None)
            if box is not None:
                box.focus(scroll_visible=False)
                box.select_all()  # also when it had the focus already (Enter in the last box ran it)
                return
        self.query_one(Page).focus(scroll_visible=False)

    def action_trace(self) -> None:
        """After the reveal (and in experiment mode): show or hide the trace of the code as it is now."""
        panel = self.query_one("#trace", TracePanel)
        if not self.revealed:
            self.notify(NOT_YET, timeout=4)
            return
        code = self.query_one("#editor", TextArea).text if self.editing else None
        if panel.shown and panel.report is not None and panel.report.until is None and panel.source == code:
            panel.hide()
        else:
            panel.fetch(self.app.tutoring, self.drill, code)

    def action_hint(self) -> None:
        before = self.hints_shown
        super().action_hint()
        until = self.drill.divergence.trace_until if self.drill.is_first_divergence else ()
        if self.hints_shown > before and self.hints_shown <= len(until) and until[self.hints_shown - 1] is not None:
            self.query_one("#trace", TracePanel).fetch(self.app.tutoring, self.drill, None, until[self.hints_shown - 1])

    def action_view(self) -> None:
        """Open a view of any name the code binds: only after the reveal (a view shows what the answers are about)."""
        if not self.revealed:
            self.notify("Predict and run first; then ctrl+l opens a view of any name.", timeout=4)
            return
        if self.phase == "running":
            return
        code = self.query_one("#editor", TextArea).text if self.editing else self.drill.code
        self.app.push_screen(ViewPrompt(self._last_view, viewable_names(self.drill.setup, code)), self._open_view)

    def request_view(self, kind: str, of: str, optimizer: str) -> None:
        code = self.query_one("#editor", TextArea).text if self.editing else None
        self.phase = "running"
        self.set_status(f"Running the code again for a {kind} view of {of}…", running=True)
        self.post_message(ViewSubmitted(self.module_id, self.drill, code, kind, of, optimizer))

    def show_view(self, report: ViewReport) -> None:
        super().show_view(report)
        self._finished()  # the view's run is over: Run and ctrl+l work again

    def action_edit(self) -> None:
        if not self.revealed:
            self.notify("Predict and run first; then change one thing and run it again.", timeout=4)
            return
        self.editing = not self.editing

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "fresh_instance":
            return self.drill.variants is not None  # hidden on a drill that has only one instance
        if action == "reset_code":  # shown in the footer only while there is code to reset
            return self.editing
        return True

    def action_reset_code(self) -> None:
        if not self.editing:
            return
        self.query_one("#editor", TextArea).load_text(self.app.tutoring.reset_code(self.module_id, self.drill))
        self.query_one("#code", CodeView).edited = False
        self.set_status("The drill's own code is back. Change one thing, then ctrl+r.")

    def watch_editing(self, editing: bool) -> None:
        self.drafts.flush()  # the edits so far kept before the editor is loaded from the drafts (or left)
        editor = self.query_one("#editor", TextArea)
        code = self.query_one("#code", CodeView)
        if editing:  # one copy of the code: the editor takes the read-only view's place
            editor.load_text(self.app.tutoring.code_for(self.module_id, self.drill))
        else:
            code.edited = editor.text != self.drill.code
        code.setup_only = editing
        editor.set_class(editing, "-shown")
        self.query_one("#editor-keys").set_class(editing, "-shown")
        self.refresh_bindings()
        if editing:
            editor.focus(scroll_visible=False)
            self.call_after_refresh(editor.scroll_visible, animate=False)  # laid out first: then in view
            what = "Repair the code" if self.drill.is_repair else "Change one thing"
            self.set_status(f"{what}, then ctrl+r to run it. ctrl+e goes back to your predictions.")
        else:
            self.query_one("#ask-0", Input).focus()
            self.set_status("Back to your predictions: Enter runs them.")

    @on(TextArea.Changed, "#editor")
    def _keep_edits(self, event: TextArea.Changed) -> None:
        """Every edit is kept for this drill: leaving it (or quitting) and coming back finds the code as it was."""
        if self.editing:
            self._code_typed = True
            self.drafts.changed()
