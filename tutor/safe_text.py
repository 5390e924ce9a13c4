"""Make untrusted text (snippet output, lesson strings) inert before display."""

from __future__ import annotations

import re

# CSI/OSC/other escape sequences, then any remaining C0/C1 control character
# except newline and tab. A snippet must not be able to move the cursor, set
# the window title or hyperlink text in the learner's terminal.
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def inert(text: str) -> str:
    """Return ``text`` with escape sequences removed and control characters shown as ``�``."""
    text = text.replace("\r\n", "\n")
    text = _ESCAPES.sub("", text)
    return _CONTROLS.sub("\ufffd", text)


def clip(text: str, limit: int) -> str:
    """Shorten ``text`` to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [{len(text) - limit:,} more characters not shown]"
