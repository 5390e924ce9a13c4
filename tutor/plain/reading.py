"""How plain mode reads a prediction, a confidence and a repair's code: one ``[kind] … > `` prompt at a time.

A mixin of :class:`tutor.plain.plain_tutor.PlainTutor` (which has ``say`` and ``ask``). What the learner typed
before and has not had verified is offered again: an empty answer (or a lone '.' for code) keeps it.
"""

from __future__ import annotations

from tutor.judge import ReadAnswer, expected_form, read_answer
from tutor.plain.text import markdown_to_plain
from tutor.progress.review import SELF_RATING_WORDS
from tutor.progress.store import CONFIDENCE_LEVELS
from tutor.safe_text import inert, safe_line
from tutor.tutoring.presentation import option_lines


class PlainReading:
    def say(self, text: str = "") -> None: ...  # PlainTutor's

    def ask(self, prompt: str, kind: str = "answer") -> str: ...  # PlainTutor's

    def read_answer(self, ask, kept: str = "") -> ReadAnswer:
        """One ask's answer; ``kept``: the learner's draft from before, which an empty line keeps."""
        while True:
            self.say(markdown_to_plain(inert(ask.question)))
            if kept:
                self.say(f"Your answer from before: {safe_line(kept, 200)} (Enter keeps it)")
            typed = self.ask(f"({expected_form(ask.kind)}) > ")
            said = read_answer(ask, typed if typed.strip() or not kept else kept)
            if said.readable:
                return said
            self.say(said.problem)

    def read_confidence(self) -> int | None:
        levels = " ".join(f"[{n}] {word}" for n, word in CONFIDENCE_LEVELS.items())
        while True:
            answer = self.ask(f"How sure are you? {levels} (Enter to skip) > ", "confidence").strip()
            if not answer:
                return None
            if answer in ("1", "2", "3"):
                return int(answer)
            self.say("Type 1, 2 or 3, or press Enter.")

    def read_rating(self, question: str) -> int:
        """A free-text answer's self-rating against the model answer, 1 (missed it) to 4 (easy)."""
        words = " ".join(f"[{n}] {w}" for n, w in SELF_RATING_WORDS.items())
        while True:
            answer = self.ask(f"{question} {words} > ", "rating").strip()
            if answer in ("1", "2", "3", "4"):
                return int(answer)
            self.say("Type a number from 1 to 4.")

    def question_lines(self, check, drill) -> None:
        """A self-check's question and options, or a drill's prompt with its setup and code, as plain text."""
        if check is not None:
            self.say(markdown_to_plain(inert(check.question)))
            for option in option_lines(check.options):
                self.say(option)
            return
        self.say(markdown_to_plain(inert(drill.prompt)))
        if drill.setup.strip():
            self.say("Setup:")
            self.say(numbered(drill.setup))
        self.say("Code:")
        self.say(numbered(drill.code))

    def read_code(self, prompt: str, kept: str = "") -> str:
        """Code typed line by line up to a lone '.'; ``kept``: the learner's code from before, which a '.'
        straight away keeps."""
        self.say(prompt + " Type the code; end with a line holding only a single '.'.")
        if kept:
            self.say("Your code from before (a '.' straight away keeps it):")
            self.say(numbered(kept))
        lines = []
        while True:
            line = self.ask("> ", "code")
            if line.strip() == ".":
                return kept if kept and not lines else "\n".join(lines) + "\n"
            lines.append(line)


def numbered(code: str) -> str:
    return "\n".join(f"  {i:>3} | {inert(line)}" for i, line in enumerate(code.rstrip("\n").splitlines(), start=1))
