"""How plain mode reads a prediction, a confidence and a repair's code: one ``[kind] … > `` prompt at a time.

A mixin of :class:`tutor.plain.plain_tutor.PlainTutor` (which has ``say`` and ``ask``). What the learner typed
before and has not had verified is offered again: an empty answer (or a lone '.' for code) keeps it.
"""

from __future__ import annotations

from tutor.judge import ReadAnswer, expected_form, read_answer
from tutor.plain.text import markdown_to_plain
from tutor.progress.store import CONFIDENCE_LEVELS
from tutor.safe_text import inert, safe_line


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
