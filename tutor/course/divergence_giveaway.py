"""Giveaways of a first-divergence drill: the answer line named before the learner has looked for it.

The answer is a line, so the value tests of ``giveaway.py`` (a shape, a number) do not
apply; what gives it away is the **answer line's code** quoted in the title, the module
intro, the prompt or the first hint ("Forgetting to divide `raw.float()` by 255"), the line
named by number ("line 4"), or a sentence there that states a wrong answer's misconception
(four shared words, one an outcome word). The line is the one ``check`` observed when it
has run, else the declared ``answer``. No torch here.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping

from tutor.course.divergence_fields import ASK_KEY
from tutor.course.schema import Drill, Module

MIN_INTRO_CODE = 25  # characters (spaces left out) of an answer line the module intro may not quote
MIN_CODE = 8  # a shorter line (`x = a`) is too common to judge by its spelling


def _answer_line(drill: Drill, observed: Mapping[str, str] | None) -> int | None:
    seen = re.fullmatch(r"line (\d+)", (observed or {}).get(ASK_KEY, ""))
    return int(seen.group(1)) if seen else drill.divergence.answer_line


def _squashed(text: str) -> str:
    return re.sub(r"\s+", "", text.replace("`", ""))


def divergence_giveaways(module: Module, drill: Drill, observed: Mapping[str, str] | None, make: Callable,
                         stems: Callable[[str], frozenset[str]], outcome_words: frozenset[str]) -> list:
    """``make(where, reason)`` builds the warning (``giveaway.Giveaway``); ``stems``/``outcome_words`` are its tests'."""
    line = _answer_line(drill, observed)
    texts = [("title", drill.title), ("prompt", drill.prompt), ("module intro", module.intro)]
    if drill.hints:
        texts.append(("first hint", drill.hints[0]))
    found = []
    lines = drill.code.splitlines()
    code = lines[line - 1].strip() if line is not None and 0 < line <= len(lines) else ""
    if len(code) >= MIN_CODE:
        for where, text in texts:
            # the module intro speaks of every drill: a short common line there (`loss.backward()`) is not
            # this drill's answer, so there only a line long enough to be this code's own counts
            if where == "module intro" and len(_squashed(code)) < MIN_INTRO_CODE:
                continue
            if _squashed(code) in _squashed(text):
                found.append(make(where, f"quotes the answer line's code ({code[:60]!r})"))
    if line is not None:
        # "line 6", "lines 6", "L6"; not "L2 regularisation" or "an L1 loss" (a norm, not a line)
        spelled = re.compile(rf"\blines?\s*{line}\b|\bL{line}\b(?!\s*(?:norm|regulari|loss|penalt|distance|decay))",
                             re.IGNORECASE)
        for where, text in texts:
            if spelled.search(text):
                found.append(make(where, f"names the answer line (line {line})"))
    for wrong in drill.wrong_answers:
        claim = stems(wrong.misconception)
        for where, text in texts[:2] + texts[3:]:  # the intro's sentences are giveaway.py's own test
            for sentence in re.split(r"(?<=[.!?])\s+", text):
                shared = claim & stems(sentence)
                if len(shared) >= 4 and shared & outcome_words:
                    found.append(make(where, f"states the misconception of wrong answer {wrong.answer!r} "
                                             f"({', '.join(sorted(shared))})"))
                    break
    return found
