"""How a text answer compares with the observed text, as each ask declares it.

An ask's ``match`` is ``exact`` (every character, case included), ``case-insensitive``
(the default) or ``regex`` with a ``pattern`` the whole answer must match. In the
first two, a qualified spelling of a name is right in substance: ``torch.Tensor``
or ``<class 'torch.Tensor'>`` for ``type(x).__name__`` = ``Tensor``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MATCH_MODES = ("exact", "case-insensitive", "regex")
DEFAULT_MATCH = "case-insensitive"
MAX_PATTERN = 500
MAX_MATCHED = 500  # a lesson's regex runs in the UI process: it only ever sees a short answer

_CLASS_REPR = re.compile(r"^<class\s+'([\w.]+)'>$")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")


@dataclass(frozen=True)
class TextMatch:
    mode: str = DEFAULT_MATCH
    pattern: str = ""

    def describe(self) -> str:
        if self.mode == "exact":
            return "exact: every character, case included"
        if self.mode == "regex":
            return "matched against a pattern"
        return "case does not matter"


def pattern_problem(pattern: str) -> str:
    """Why ``pattern`` is not a usable answer pattern, or ``""``."""
    if not pattern:
        return "a regex match needs a `pattern`"
    if len(pattern) > MAX_PATTERN:
        return f"the pattern is longer than {MAX_PATTERN} characters"
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"the pattern is not a regular expression: {exc}"
    return ""


def _bare(text: str) -> str:
    """``<class 'torch.Tensor'>`` → ``torch.Tensor``."""
    m = _CLASS_REPR.match(text)
    return m.group(1) if m else text


def text_matches(predicted: str, observed: str, how: TextMatch) -> bool:
    if how.mode == "regex":
        if len(predicted) > MAX_MATCHED or pattern_problem(how.pattern):
            return False
        return re.fullmatch(how.pattern, predicted) is not None
    fold = (lambda s: s) if how.mode == "exact" else str.casefold
    p, o = fold(_bare(predicted)), fold(_bare(observed))
    if p == o:
        return True
    # a qualified name for the same thing: torch.Tensor for Tensor (and Tensor for torch.Tensor)
    if _DOTTED.match(p) and "." not in o and p.rsplit(".", 1)[1] == o:
        return True
    return bool(_DOTTED.match(o)) and "." not in p and o.rsplit(".", 1)[1] == p
