"""A scripted learner for interview flow tests: it answers whatever question the interview asks.

An interview picks its questions as it goes (a staircase over the scope, ties broken at random), so a
flow test cannot script its input in advance; this learner reads the question on the screen (plain
mode's output, or the app's prompt) and answers it from ``ANSWERS``, keyed by a phrase of the question.
"""

from __future__ import annotations

import io
import re

# The mini course (tests/fixtures/mini_course): each question by a phrase of its prompt, what this learner
# types for each ask, the confidence, and whether that is right. transpose-strides is answered with its
# declared misconception, and with certainty: the debrief must list it, and its calibration must show it.
ANSWERS = {
    "s strides?": (["(3, 1)"], "3", False),
    "summing an int tensor": (["int64", "6"], "2", True),
    "do on a transposed": (["RuntimeError"], "2", True),
    "1 + 1 as a tensor": (["2"], "3", True),
    "Which of these copies?": (["b"], "3", True),
    "Why can a transpose be free?": (["it only swaps the strides; no element moves"], "3", True),  # rated 3
}
REPAIR = "a = torch.ones(3)\nb = a.mean()\n"


def question_of(text: str) -> str:
    """Which of ``ANSWERS`` the latest question on screen is."""
    latest = text.rsplit("== Question", 1)[-1]
    for phrase in ANSWERS:
        if phrase in latest:
            return phrase
    if "should give a 0-d mean" in latest:
        return "repair"
    raise AssertionError(f"an unexpected question: {latest[:300]!r}")


class PlainLearner(io.TextIOBase):
    """stdin for plain mode: each line answers the prompt the output ends with."""

    def __init__(self, out: io.StringIO, setup: list[str]):
        self.out = out
        self.setup = list(setup)  # the [module] and [interview] prompts' answers, in order
        self.given: dict[tuple[str, str], int] = {}  # per question and prompt kind: the lines given so far
        self.asked: list[str] = []

    def readable(self) -> bool:
        return True

    def readline(self, size: int = -1) -> str:
        text = self.out.getvalue()
        prompt = text.rstrip().rsplit("\n", 1)[-1]
        kind = re.match(r"\[([a-z-]+)\]", prompt)
        kind = kind.group(1) if kind else ""
        if kind in ("module", "interview"):
            return (self.setup.pop(0) if self.setup else ":quit") + "\n"
        phrase = question_of(text)
        if phrase not in self.asked:
            self.asked.append(phrase)
        done = self.given.get((phrase, kind), 0)
        self.given[(phrase, kind)] = done + 1
        if phrase == "repair":
            lines = REPAIR.splitlines() + ["."]
            return lines[min(done, len(lines) - 1)] + "\n"
        answers, confidence, _right = ANSWERS[phrase]
        if kind == "confidence":
            return confidence + "\n"
        if kind == "rating":
            return "3\n"
        return answers[min(done, len(answers) - 1)] + "\n"
