"""Plain mode: the same drills, line by line, without the TUI.

For screen readers, for terminals where a full-screen app is unwelcome, and for
scripts: everything is read from stdin a line at a time and written as plain
text (no colour, no cursor movement). End of input saves and leaves cleanly.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import TextIO

from tutor.course import grants
from tutor.course.schema import Drill, Module
from tutor.plain.choose import ModuleChooser
from tutor.plain.flow import Leave, Skip, ToMap
from tutor.plain.reading import PlainReading
from tutor.plain.symptoms import PlainSource
from tutor.plain.text import gpu_note_text, markdown_to_plain
from tutor.safe_text import inert, safe_line
from tutor.sandbox.client import Sandbox
from tutor.session import OPENABLE, SELF_CHECKS, Session
from tutor.tutoring.presentation import (hint_line, option_lines, plain_lines, rubric_lines, run_blocks,
                                        self_check_verdict)
from tutor.tutoring.lab_brief import brief_lines
from tutor.tutoring.reports import ModuleRef, RunReport
from tutor.tutoring.service import SandboxPort, TutoringService
from tutor.tutoring.view_blocks import read_view_request, view_report_blocks
from tutor.tutoring.states import Outcome
from tutor.tutoring.trace_view import trace_lines
from tutor.workspace import Workspace, ensure_starter, reset_exercise
from tutor.wording import drill_label, shown_title

# The prompt protocol (README.md, "Plain mode and scripts"): every prompt is one line that starts with
# its kind in brackets and ends with "> ", with no newline after it; a script reads up to "> " and
# answers by the kind. The first prompt is always [module], unless --module or --drill names the start.
PROMPT_KINDS = ("module", "answer", "confidence", "code", "continue", "lab", "self-check", "rating", "test-out",
                "interview")

HELP = ("At any prompt: ':hint' shows the next hint, ':skip' moves on, ':map' returns to the module list, "
        "':quit' leaves (progress is always saved); in a lab, ':reset' restores the starter file; after a drill's "
        "first run, ':trace' shows its code's trace (every tensor after every line) and ':view graph loss' "
        "(or storage NAME, module NAME [OPTIMIZER]) a view of any name. At the module list, 'test NN' tests out "
        "of locked module NN's prerequisites, and 'interview' starts a mock interview.")



class PlainTutor(PlainReading, PlainSource):
    def __init__(self, session: Session, sandbox: SandboxPort, profile: str, stdin: TextIO = sys.stdin,
                 out: TextIO = sys.stdout, start: tuple[str, str] | None = None,
                 interview: tuple[int | None, str | None] | None = None):
        self.session = session
        self.interview = interview  # `pytorch-tutor --plain interview`: (minutes, scope), either None to ask
        self.start = start  # (module, item) to begin at, from --module / --drill (see start_point)
        self.workspace = Workspace(profile, session.course.identity)  # this course's lab files
        self.service = TutoringService(session, sandbox, self.workspace, on_run=self._announce_run)
        self._announced = False  # "Running in the sandbox…" said for this action already
        self.profile = profile
        self.stdin = stdin
        self.out = out
        self.loop = asyncio.new_event_loop()
        self._warming: asyncio.Task | None = None  # the sandbox's start, going while the learner reads
        self._hints: list[str] = []
        self._hints_shown = 0
        self._drill: Drill | None = None  # the drill being predicted: its trace hints and `:trace` run it
        self._revealed = False
        self._viewable: tuple[str, Drill, str | None] | None = None  # after the reveal: (module, drill, code)

    # ---------------------------------------------------------------- input and output

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def ask(self, prompt: str, kind: str = "answer") -> str:
        """One line from stdin after a ``[kind] …> `` prompt; the `:` commands are handled here."""
        assert kind in PROMPT_KINDS, kind
        self.out.write(f"[{kind}] {prompt}")
        self.out.flush()
        line = self._readline()
        if not line:
            raise Leave()
        answer = line.rstrip("\n")
        command = answer.strip().lower()
        if command in (":quit", ":q"):
            raise Leave()
        if command == ":skip":
            raise Skip()
        if command == ":map":
            raise ToMap()
        if command in (":hint", ":h"):
            self.show_hint()
            return self.ask(prompt, kind)
        if command in (":help", "?"):
            self.say(HELP)
            return self.ask(prompt, kind)
        if command == ":trace":
            self.show_trace()
            return self.ask(prompt, kind)
        if command == ":view" or command.startswith(":view "):
            self.show_view(answer.strip()[len(":view"):])
            return self.ask(prompt, kind)
        return answer

    def _readline(self) -> str:
        """A line from stdin; while the sandbox starts, the loop keeps running its start meanwhile.

        The line is read on a daemon thread then, so a learner who leaves (Ctrl-C, end of input)
        never waits on it; the service and the profile stay on this thread."""
        if self._warming is None or self._warming.done():
            return self.stdin.readline()
        line: asyncio.Future = self.loop.create_future()

        def read() -> None:
            try:
                text = self.stdin.readline()
            except BaseException as exc:  # handed to the reader, as if read on this thread
                self.loop.call_soon_threadsafe(line.set_exception, exc)
            else:
                self.loop.call_soon_threadsafe(line.set_result, text)

        threading.Thread(target=read, name="plain-tutor-stdin", daemon=True).start()
        return self.loop.run_until_complete(line)

    def _await_warm_sandbox(self) -> None:
        if self._warming is None:
            return
        if not self._warming.done():
            self.say("The sandbox is still starting; your run goes as soon as it is ready…")
            self.loop.run_until_complete(asyncio.wait([self._warming]))
        if not self._warming.cancelled():
            self._warming.exception()  # a failed start is tried again by the run, which says why
        self._warming = None

    def show_view(self, typed: str) -> None:
        """``:view graph loss``: the code runs again with that view; nothing is judged or recorded."""
        if self._viewable is None:
            self.say("Views open once this drill has run (they show what the answers are about).")
            return
        read = read_view_request(typed)
        if isinstance(read, str):
            self.say(read)
            return
        module_id, drill, code = self._viewable
        report = self.act(self.service.open_view(module_id, drill, code, *read))
        for text in plain_lines(view_report_blocks(report)):
            self.say(text)

    def show_trace(self, until: int | None = None) -> None:
        """The drill's code traced (after its reveal), or a trace hint's rows up to ``until``."""
        drill = self._drill
        if drill is None or (until is None and not self._revealed):
            self.say("The trace opens after your first prediction is checked.")
            return
        report = self.act(self.service.trace(drill, until=until))
        for text in trace_lines(report):
            self.say(text)

    def show_hint(self) -> None:
        if self._hints_shown >= len(self._hints):
            self.say("No more hints here.")
            return
        self._hints_shown += 1
        self.say(hint_line(self._hints, self._hints_shown).text)
        drill = self._drill
        if drill is not None and drill.is_first_divergence and self._hints == list(drill.hints):
            until = drill.divergence.trace_until[self._hints_shown - 1]
            if until is not None:  # bisection: the rows up to that line, never the failing one
                self.show_trace(until)

    def _announce_run(self) -> None:
        if not self._announced:  # once per action, though one may run twice (a prediction and its trace)
            self._announced = True
            self.say("Running in the sandbox…")

    def act(self, action):
        """One of the service's use cases (a coroutine) run to its report; "Running…" is said by the
        service's ``on_run``, only if it really runs something."""
        self._announced = False
        self._await_warm_sandbox()
        return self.loop.run_until_complete(action)

    def perform(self, action) -> RunReport:
        """Run one of the service's use cases (a coroutine) to its report, and show the report."""
        report = self.act(action)
        if report.stages:  # a chained lab: whose code each earlier stage ran
            self.say("Earlier stages: " + "; ".join(inert(n) for n in report.stages))
        for text in plain_lines(run_blocks(report)):
            self.say(text)
        if report.trace is not None:  # a first-divergence drill's run: its rows, the first failure marked
            for text in trace_lines(report.trace):
                self.say(text)
        self.announce(report.unlocked)
        return report

    def announce(self, unlocked: tuple[ModuleRef, ...]) -> None:
        for module in unlocked:
            self.say(f"Unlocked: {module.id} {inert(module.title)}")

    # ---------------------------------------------------------------- the session

    def main(self) -> int:
        try:
            # The zygote takes 10 s and more under load: the learner reads the list meanwhile.
            self._warming = self.loop.create_task(self.service.start())
            self.say(f"pytorch-tutor (plain mode) — {inert(self.session.course.title)} — profile {self.profile}")
            self.say("Starting the sandbox in the background; choose a module meanwhile.")
            self.say(HELP)
            if self.session.store.notice:
                self.say(self.session.store.notice)
            if self.interview is not None:
                from tutor.plain.interview import PlainInterview

                PlainInterview(self, *self.interview).take()
                raise Leave()
            start = self.start  # --module / --drill: where to begin; otherwise always the module list
            while True:
                try:
                    if start:
                        module_id, item = start
                        start = None
                    else:
                        module_id, item = self.choose_module()
                    self.study(module_id, item)
                except ToMap:
                    continue
        except Leave:
            self.say("Goodbye — your progress is saved.")
            return 0
        finally:
            if self._warming is not None:  # close what a start still in flight opens
                self.loop.run_until_complete(asyncio.wait([self._warming]))
            self.loop.run_until_complete(self.service.close())
            self.loop.close()

    def choose_module(self) -> tuple[str, str]:
        """The module list and the learner's choice (:mod:`tutor.plain.choose`)."""
        return ModuleChooser(self).choose()

    def study(self, module_id: str, item: str) -> None:
        module = self.session.module(module_id)
        assert module is not None
        ids = [d.id for d in module.drills]
        start = ids.index(item) if item in ids else len(ids)
        if start == 0 and module.intro.strip():  # opening the module at its start: what the map shows beside it
            self.say("")
            self.say(f"== Module {module.id}: {inert(self.session.slot(module_id).title)}")
            self.say(markdown_to_plain(inert(module.intro)))
        for drill in module.drills[start:]:
            self.session.visit(module_id, drill.id)
            try:
                self.drill(module, drill)
            except Skip:
                self.say("Skipped.")
            self.practise_weak_spot(module_id, drill.id, self.session.next_after(module_id, drill.id))
        if module.self_checks:
            self.session.visit(module_id, SELF_CHECKS)
            self.self_check(module)
        state = self.session.state(module_id)
        self.say(f"Module {module_id}: {state.status.value}.")

    def practise_weak_spot(self, module_id: str, drill_id: str, upcoming: str | None) -> None:
        """Every few finished drills, one drill on a mechanism a misconception showed (a fresh instance
        where it has variants); then the module goes on where it was."""
        spot = self.session.practice_after(module_id, drill_id, upcoming)
        if spot is None:
            return
        module = self.session.module(spot[0])
        drill = module.drill(spot[1]) if module is not None else None
        if drill is None:
            return
        self.say("")
        self.say(f"Practice on a weak spot (module {module.id}): one of your answers showed a misconception about "
                 "what this drill tests. After it, the module goes on where you were (:skip skips it).")
        self.service.fresh_instance(module.id, drill)
        try:
            self.drill(module, drill)
        except Skip:
            self.say("Skipped.")

    # ---------------------------------------------------------------- drills

    def drill(self, module: Module, drill: Drill) -> None:
        drill = self.service.present(module.id, drill)  # a drill with variants: an instance never answered
        number = [d.id for d in module.drills].index(drill.id) + 1
        self._hints, self._hints_shown = list(drill.hints), 0
        self._drill, self._revealed = (None, False) if drill.is_exercise else (drill, False)
        self._viewable = None
        self.say("")
        kind = drill_label(drill)
        self.say(f"== {module.id} {kind} {number}/{len(module.drills)}: {inert(shown_title(drill))}")
        self.say(markdown_to_plain(inert(drill.prompt)))
        if drill.is_exercise:
            self.exercise(module, drill)
            return
        hidden = self.source_or_symptoms(module.id, drill)  # a symptoms-first repair: only what its run printed
        clock = time.monotonic()
        in_review = self.service.in_review(module.id, drill)
        if in_review:  # recall: no earlier answer is offered; the explanation comes after the run
            self.say("Due for review: predict from memory what PyTorch will do.")
        while True:
            if self.service.instance_already_answered(module.id, drill):  # its answers were just shown
                drill = self.service.fresh_instance(module.id, drill)
                self._drill, self._hints = drill, list(drill.hints)  # the hints name this instance's values
                self.say("A fresh instance of this drill (its shapes or values differ): predict it.")
                self.say(markdown_to_plain(inert(drill.prompt)))
                hidden = self.source_or_symptoms(module.id, drill)
            said = {}
            # typed before (here or in the app) and not verified; never offered in a review
            kept = {} if in_review else self.service.draft_answers(module.id, drill)
            for ask in drill.asks:
                for option in option_lines(ask.options):
                    self.say(option)
                said[ask.key] = self.read_answer(ask, kept.get(ask.key, ""))
                self.service.keep_answers(module.id, drill, {ask.key: said[ask.key].text})  # kept if input ends here
            confidence = self.read_confidence()
            report = self.perform(self.service.submit_prediction(module.id, drill, said, time.monotonic() - clock,
                                                                 confidence, shown={}))
            if report.outcome == Outcome.RECALL_NEEDED:
                self.say(report.not_recorded)
                continue
            in_review = False
            if report.outcome == Outcome.NOT_FINISHED:
                self.ask(f"{report.not_recorded} Enter to try again > ", "continue")
                continue
            self._revealed = True
            self._viewable = (module.id, drill, None)
            if hidden and report.recorded is not None:  # the diagnosis is recorded: now the source
                hidden = self.source_after_diagnosis(drill)
            if not drill.is_repair or report.drill_done:  # a repair's explanation names the fix: it waits
                self.explain(drill)
            if report.outcome in (Outcome.VERIFIED, Outcome.SYMPTOM_FOUND):
                self.say("Verified ✓ right.")
                break
            self.say("Not yet ✗ — a fresh instance follows; predict it (:hint for a hint, :skip to move on)."
                     if drill.variants is not None else
                     "Not yet ✗ — change your prediction and try again (:hint for a hint, :skip to move on).")
            clock = time.monotonic()
        if drill.is_repair:
            self.repair(module, drill)

    def explain(self, drill: Drill) -> None:
        self.say("Why: " + markdown_to_plain(inert(drill.explanation)))
        if drill.gpu_note.strip():
            self.say("On a GPU (not executed here): " + gpu_note_text(inert(drill.gpu_note)))

    def repair(self, module: Module, drill: Drill) -> None:
        while not self.session.drill_done(module.id, drill.id):
            clock = time.monotonic()
            what = "every contract holds on every line" if drill.is_first_divergence else "its check passes"
            kept = self.service.code_for(module.id, drill)
            code = self.read_code(f"Now repair the code so {what}.", kept if kept != drill.code else "")
            self.service.keep_code(module.id, drill, code)  # kept across relaunches, in the app's editor too
            report = self.perform(self.service.submit_repair(module.id, drill, code, time.monotonic() - clock))
            self._viewable = (module.id, drill, code)  # a view now shows the learner's repair
            if report.outcome == Outcome.NOT_FINISHED:
                self.say(report.not_recorded)
            elif report.outcome in (Outcome.REPAIRED, Outcome.REPAIRED_PREDICT_NEXT):
                self.say("Repaired ✓ — the reference solution:")
                self.say(_indent(drill.solution.rstrip("\n")))
                if report.drill_done:
                    self.explain(drill)
            else:
                self.say("The check does not pass yet.")

    def exercise(self, module: Module, drill: Drill) -> None:
        path = ensure_starter(self.workspace, module.id, drill)
        for line in brief_lines(drill):
            self.say(markdown_to_plain(inert(line)))
        self.say(f"Your file: {path}")
        clock = time.monotonic()
        while True:
            command = self.ask("Edit the file in your editor and save, then press Enter to run the checks "
                               "(:reset restores the starter) > ", "lab").strip().lower()
            if command == ":reset":
                kept = reset_exercise(self.workspace, module.id, drill)
                self.say("The starter is back." + (f" Your version is kept at {kept}." if kept else ""))
                self._hints, self._hints_shown = list(drill.hints), 0
                continue
            report = self.perform(self.service.check_lab_file(module.id, drill, time.monotonic() - clock))
            if report.outcome == Outcome.FILE_UNREADABLE:  # nothing ran: what is wrong with the file, and the policy
                self.say(report.problems["code"])
                self.say(report.not_recorded)
                continue
            clock = time.monotonic()
            if report.hints and list(report.hints) != self._hints:  # the failing test's own hints first
                self._hints, self._hints_shown = list(report.hints), 0
            if report.outcome == Outcome.NOT_FINISHED:
                self.say(report.not_recorded)
            elif report.outcome == Outcome.SOLVED:
                self.say("Why: " + markdown_to_plain(inert(drill.explanation)))
                self.say("The reference solution:")
                self.say(_indent(drill.solution.rstrip("\n")))
                return

    # ---------------------------------------------------------------- self-check

    def self_check(self, module: Module) -> None:
        self.say("")
        self.say(f"== {module.id} self-check: answer as you would in an interview.")
        for number, check in enumerate(module.self_checks, start=1):
            self._hints, self._hints_shown = [], 0
            try:
                self.say(f"Question {number}/{len(module.self_checks)}: {markdown_to_plain(inert(check.question))}")
                for option in option_lines(self.service.shown_options(module.id, check)):  # shuffled in review
                    self.say(option)
                clock = time.monotonic()
                kept = "" if check.is_choice else self.service.self_check_draft(module.id, check)
                if kept:  # typed in the app and not yet answered: an empty line keeps it
                    self.say(f"Your answer from before: {safe_line(kept, 2000)} (Enter keeps it)")
                while True:
                    answer = self.ask("Your answer > ", "self-check")
                    answer = answer if answer.strip() or not kept else kept
                    report = self.act(
                        self.service.answer_self_check(module.id, check, answer, time.monotonic() - clock))
                    if not report.problem:
                        break
                    self.say(report.problem)
                if report.correct is not None:
                    self.say(self_check_verdict(report.correct, report.right_answer))
                self.say("Model answer: " + markdown_to_plain(inert(report.model_answer)))
                for text in rubric_lines(report.points):
                    self.say(text)
                if report.needs_rating:
                    self.rate(module, check)
                self.announce(report.unlocked)
            except Skip:
                self.say("Skipped.")

    def rate(self, module: Module, check) -> None:
        self.service.rate_self_check(module.id, check, self.read_rating("Compared with the model answer, how did you do?"))


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def run_plain(session: Session, profile: str, stdin: TextIO = sys.stdin, out: TextIO = sys.stdout,
              sandbox: Sandbox | None = None, start: tuple[str, str] | None = None,
              interview: tuple[int | None, str | None] | None = None) -> int:
    """``start``: (module, item) from ``Session.start_point`` (--module / --drill); else the module list.
    ``interview``: (minutes, scope) of `pytorch-tutor --plain interview` (None in either: asked)."""
    sandbox = sandbox or Sandbox(**grants.sandbox_options(session.course.root, session.course.modules()))
    return PlainTutor(session, sandbox, profile, stdin, out, start, interview).main()


__all__ = ["OPENABLE", "PlainTutor", "run_plain"]
