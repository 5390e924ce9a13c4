"""Plain mode: the same drills, line by line, without the TUI.

For screen readers, for terminals where a full-screen app is unwelcome, and for
scripts: everything is read from stdin a line at a time and written as plain
text (no colour, no cursor movement). End of input saves and leaves cleanly.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TextIO

from tutor.course import grants
from tutor.course.graph import Status
from tutor.course.schema import Drill, Module
from tutor.grading import DrillOutcome, describe_error, grade, request_for
from tutor.judge import AnswerError, expected_form, parse_answer
from tutor.progress.store import CONFIDENCE_LEVELS
from tutor.review import SELF_RATING_WORDS
from tutor.safe_text import clip, inert
from tutor.sandbox.client import Sandbox
from tutor.session import OPENABLE, SELF_CHECKS, Session, code_run_passed
from tutor.workspace import ensure_starter, read_exercise

HELP = ("At any prompt: ':hint' shows the next hint, ':skip' moves on, ':map' returns to the module list, "
        "':quit' leaves (progress is always saved).")


class _Leave(Exception):
    """The learner asked to quit, or the input ended."""


class _Skip(Exception):
    pass


class _ToMap(Exception):
    pass


class PlainTutor:
    def __init__(self, session: Session, sandbox: Sandbox, profile: str, stdin: TextIO = sys.stdin,
                 out: TextIO = sys.stdout):
        self.session = session
        self.sandbox = sandbox
        self.profile = profile
        self.stdin = stdin
        self.out = out
        self.loop = asyncio.new_event_loop()
        self._hints: list[str] = []
        self._hints_shown = 0

    # ---------------------------------------------------------------- input and output

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def ask(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.stdin.readline()
        if not line:
            raise _Leave()
        answer = line.rstrip("\n")
        command = answer.strip().lower()
        if command in (":quit", ":q"):
            raise _Leave()
        if command == ":skip":
            raise _Skip()
        if command == ":map":
            raise _ToMap()
        if command in (":hint", ":h"):
            self.show_hint()
            return self.ask(prompt)
        if command in (":help", "?"):
            self.say(HELP)
            return self.ask(prompt)
        return answer

    def show_hint(self) -> None:
        if self._hints_shown >= len(self._hints):
            self.say("No more hints here.")
            return
        self._hints_shown += 1
        self.say(f"Hint {self._hints_shown}/{len(self._hints)}: {inert(self._hints[self._hints_shown - 1])}")

    def run(self, code: str | None, drill: Drill, answers: dict[str, str] | None = None) -> DrillOutcome:
        self.say("Running in the sandbox…")
        result = self.loop.run_until_complete(self.sandbox.run(request_for(drill, code)))
        return grade(drill, answers or {}, result)

    # ---------------------------------------------------------------- the session

    def main(self) -> int:
        try:
            self.loop.run_until_complete(self.sandbox.start())
            self.say(f"pytorch-tutor (plain mode) — {inert(self.session.course.title)} — profile {self.profile}")
            self.say(HELP)
            if self.session.store.notice:
                self.say(self.session.store.notice)
            resume = self.session.resume_point()
            while True:
                try:
                    if resume:
                        module_id, item = resume
                        resume = None
                        self.say(f"Resuming module {module_id}.")
                    else:
                        module_id = self.choose_module()
                        item = self.session.entry_point(module_id)
                    self.study(module_id, item)
                except _ToMap:
                    continue
        except _Leave:
            self.say("Goodbye — your progress is saved.")
            return 0
        finally:
            self.loop.run_until_complete(self.sandbox.close())
            self.loop.close()

    def choose_module(self) -> str:
        while True:
            self.say("")
            self.say("Modules:")
            for slot in self.session.course.slots:
                state = self.session.state(slot.id)
                note = state.reason if state.status in (Status.LOCKED, Status.BROKEN) else state.status.value
                self.say(f"  {slot.id}  {inert(slot.title)} — {note}")
            try:
                choice = self.ask("Module to open (its number; :quit to leave) > ").strip()
            except (_Skip, _ToMap):
                continue
            module_id = choice.zfill(2) if choice.isdigit() else choice
            if self.session.slot(module_id) is None:
                self.say(f"There is no module {choice!r}.")
            elif not self.session.can_open(module_id):
                state = self.session.state(module_id)
                self.say(f"Module {module_id} is {state.status.value}: {state.reason}")
            else:
                return module_id

    def study(self, module_id: str, item: str) -> None:
        module = self.session.module(module_id)
        assert module is not None
        ids = [d.id for d in module.drills]
        start = ids.index(item) if item in ids else len(ids)
        for drill in module.drills[start:]:
            self.session.visit(module_id, drill.id)
            try:
                self.drill(module, drill)
            except _Skip:
                self.say("Skipped.")
        if module.self_checks:
            self.session.visit(module_id, SELF_CHECKS)
            self.self_check(module)
        state = self.session.state(module_id)
        self.say(f"Module {module_id}: {state.status.value}.")

    # ---------------------------------------------------------------- drills

    def drill(self, module: Module, drill: Drill) -> None:
        number = [d.id for d in module.drills].index(drill.id) + 1
        self._hints, self._hints_shown = list(drill.hints), 0
        self.say("")
        kind = "exercise" if drill.is_exercise else "repair drill" if drill.is_repair else "drill"
        self.say(f"== {module.id} {kind} {number}/{len(module.drills)}: {inert(drill.title)}")
        self.say(inert(drill.prompt).rstrip())
        if drill.is_exercise:
            self.exercise(module, drill)
            return
        self.say("")
        if drill.setup.strip():
            self.say("Setup:")
            self.say(_numbered(drill.setup))
        self.say("Code:")
        self.say(_numbered(drill.code))
        clock = time.monotonic()
        while True:
            answers = {}
            for ask in drill.asks:
                if ask.options:
                    for i, option in enumerate(ask.options):
                        self.say(f"   {chr(ord('a') + i)}) {inert(option)}")
                answers[ask.key] = self.read_answer(ask)
            confidence = self.read_confidence()
            outcome = self.run(None, drill, answers)
            seconds = time.monotonic() - clock
            self.report(outcome)
            if not outcome.result.ok:
                self.ask("The run did not finish, so nothing was recorded. Enter to try again > ")
                continue
            self.session.record_prediction(module.id, drill, answers, outcome, seconds, confidence)
            self.report_verdicts(outcome)
            self.say("Why: " + inert(drill.explanation).strip())
            if drill.gpu_note.strip():
                self.say("On a GPU (not executed here): " + inert(drill.gpu_note).strip())
            if outcome.predictions_correct:
                self.say("Verified ✓ right.")
                break
            self.say("Not yet ✗ — change your prediction and try again (:hint for a hint, :skip to move on).")
            clock = time.monotonic()
        if drill.is_repair:
            self.repair(module, drill)

    def read_answer(self, ask) -> str:
        while True:
            answer = self.ask(f"{inert(ask.question)}\n  ({expected_form(ask.kind)})\n> ")
            try:
                parse_answer(ask.kind, answer, ask.options)
                return answer
            except AnswerError as exc:
                self.say(str(exc))

    def read_confidence(self) -> int | None:
        levels = " ".join(f"[{n}] {word}" for n, word in CONFIDENCE_LEVELS.items())
        while True:
            answer = self.ask(f"How sure are you? {levels} (Enter to skip) > ").strip()
            if not answer:
                return None
            if answer in ("1", "2", "3"):
                return int(answer)
            self.say("Type 1, 2 or 3, or press Enter.")

    def report(self, outcome: DrillOutcome) -> None:
        result = outcome.result
        if not result.ok:
            self.say(result.message)
        if result.output.strip():
            self.say("Output:")
            self.say(_indent(clip(result.output.rstrip("\n"), 3000)))

    def report_verdicts(self, outcome: DrillOutcome) -> None:
        if outcome.compile_error is not None:  # the cause first: no ask below was evaluated
            self.say(f"The code did not compile: {inert(describe_error(outcome.compile_error))}")
        for a in outcome.asks:
            mark = "✓ right" if a.correct else "✗ wrong"
            given = a.verdict.given if a.verdict and a.verdict.given else a.answer
            observed = a.verdict.observed if a.verdict and a.verdict.observed else a.problem
            self.say(f"- {inert(a.ask.question)}: you said {inert(given)}; observed {inert(observed)} — {mark}")
        if outcome.compile_error is None and (divergence := outcome.first_divergence()):
            self.say(f"First divergence: {inert(divergence)}")
        for a in outcome.asks:
            if a.verdict and a.verdict.misconception:
                self.say(f"That answer reveals a common misconception: {inert(a.verdict.misconception)}")
        if outcome.error is not None and outcome.compile_error is None:
            self.say(f"Raised: {inert(describe_error(outcome.error))}")
        if outcome.check != "skipped":
            message = outcome.check_message if outcome.check != "passed" else ""
            self.say(f"Check: {outcome.check}" + (f" — {inert(message)}" if message else ""))
        for rule in outcome.fence:
            self.say(f"Fence rule broken: {inert(rule)}")

    def read_code(self, prompt: str) -> str:
        self.say(prompt + " Type the code; end with a line holding only a single '.'.")
        lines = []
        while True:
            line = self.ask("")
            if line.strip() == ".":
                return "\n".join(lines) + "\n"
            lines.append(line)

    def repair(self, module: Module, drill: Drill) -> None:
        while not self.session.drill_done(module.id, drill.id):
            code = self.read_code("Now repair the code so its check passes.")
            clock = time.monotonic()
            outcome = self.run(code, drill)
            self.report(outcome)
            if not outcome.result.ok:
                continue
            self.session.record_code_run(module.id, drill, code, outcome, time.monotonic() - clock, "repair")
            if code_run_passed(outcome):
                self.say("Repaired ✓ — the reference solution:")
                self.say(_indent(drill.solution.rstrip("\n")))
            else:
                self.say(f"The check does not pass yet ({outcome.check}"
                         + (f": {inert(outcome.check_message)}" if outcome.check != "skipped"
                            else "") + ").")
                if outcome.error is not None:
                    self.say(f"Raised: {inert(describe_error(outcome.error))}")

    def exercise(self, module: Module, drill: Drill) -> None:
        path = ensure_starter(self.profile, module.id, drill)
        self.say(f"Your file: {path}")
        while True:
            self.ask("Edit the file in your editor and save, then press Enter to run the checks > ")
            try:
                code = read_exercise(path)
            except ValueError as exc:
                self.say(str(exc))
                continue
            clock = time.monotonic()
            outcome = self.run(code, drill)
            self.report(outcome)
            if not outcome.result.ok:
                continue
            self.session.record_code_run(module.id, drill, code, outcome, time.monotonic() - clock, "exercise")
            if code_run_passed(outcome):
                self.say("All checks pass ✓. Why: " + inert(drill.explanation).strip())
                self.say("The reference solution:")
                self.say(_indent(drill.solution.rstrip("\n")))
                return
            if outcome.error is not None:
                self.say(f"Your code raised {inert(describe_error(outcome.error))}")
            else:
                self.say(f"First failing check: {inert(outcome.check_message)}")

    # ---------------------------------------------------------------- self-check

    def self_check(self, module: Module) -> None:
        self.say("")
        self.say(f"== {module.id} self-check: answer as you would in an interview.")
        for number, check in enumerate(module.self_checks, start=1):
            self._hints, self._hints_shown = [], 0
            try:
                self.say(f"Question {number}/{len(module.self_checks)}: {inert(check.question).strip()}")
                for i, option in enumerate(check.options):
                    self.say(f"   {chr(ord('a') + i)}) {inert(option)}")
                clock = time.monotonic()
                while True:
                    answer = self.ask("Your answer > ")
                    result, unlocked = self.session.answer_self_check(module.id, check, answer,
                                                                      time.monotonic() - clock)
                    if not result.problem:
                        break
                    self.say(result.problem)
                if result.correct is True:
                    self.say("Right.")
                elif result.correct is False:
                    self.say(f"Not quite: the answer is {chr(ord('a') + check.correct)}) {inert(check.options[check.correct])}.")
                self.say("Model answer: " + inert(check.answer).strip())
                if result.correct is None:
                    self.rate(module, check)
                for module_id in unlocked:
                    self.say(f"Unlocked: {module_id} {inert(self.session.slot(module_id).title)}")
            except _Skip:
                self.say("Skipped.")

    def rate(self, module: Module, check) -> None:
        words = " ".join(f"[{n}] {w}" for n, w in SELF_RATING_WORDS.items())
        while True:
            answer = self.ask(f"Compared with the model answer, how did you do? {words} > ").strip()
            if answer in ("1", "2", "3", "4"):
                self.session.rate_self_check(module.id, check, int(answer))
                return
            self.say("Type a number from 1 to 4.")


def _numbered(code: str) -> str:
    return "\n".join(f"  {i:>3} | {inert(line)}" for i, line in enumerate(code.rstrip("\n").splitlines(), start=1))


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def run_plain(session: Session, profile: str, stdin: TextIO = sys.stdin, out: TextIO = sys.stdout,
              sandbox: Sandbox | None = None) -> int:
    sandbox = sandbox or Sandbox(read_only=grants.code_dirs(session.course.root))
    return PlainTutor(session, sandbox, profile, stdin, out).main()


__all__ = ["OPENABLE", "PlainTutor", "run_plain"]
