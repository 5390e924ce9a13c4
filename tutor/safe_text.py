"""Make untrusted text (snippet output, lesson strings) inert before display."""

from __future__ import annotations

import re

# CSI/OSC/other escape sequences, then any remaining C0/C1 control character
# except newline and tab. A snippet must not be able to move the cursor, set
# the window title or hyperlink text in the learner's terminal.
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")
# Also lone surrogates (they cannot be encoded, so printing one ends the program
# with a codec error), the bidirectional overrides, isolates and marks that make text
# read in an order other than the one it is stored in (U+202A-E, U+2066-9, U+200E/F,
# U+061C), the invisible ones that hide what a line says or where it breaks
# (zero-width spaces and joiners U+200B-D, U+2060-4, U+FEFF, U+180E) and the Unicode
# line and paragraph separators (U+2028/9), which some terminals and pages break on.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069"
                       r"\u061c\u180e\u200b-\u200f\u2028\u2029\u2060-\u2064\ufeff]")


def inert(text: str) -> str:
    """Return ``text`` with escape sequences removed and control characters shown as ``�``."""
    if not isinstance(text, str):
        text = str(text)
    text = text.replace("\r\n", "\n")
    text = _ESCAPES.sub("", text)
    return _CONTROLS.sub("\ufffd", text)


def safe_line(text: str, limit: int = 2000) -> str:
    """``text`` made inert and clipped: for anything short that reaches a screen or a terminal."""
    return clip(inert(text), limit)


def clip(text: str, limit: int) -> str:
    """Shorten ``text`` to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [{len(text) - limit:,} more characters not shown]"


class InertStream:
    """A text stream that makes everything written through it inert (see ``inert``).

    The command line's one room for what reaches the terminal: every command prints through
    it (``tutor.cli`` puts it over ``sys.stdout`` and ``sys.stderr``), so a course title, a
    profile's text or a snippet's output shown by any command is inert without each ``print``
    remembering to be. The commands print no escape sequences of their own (the TUI draws
    through Textual's own channel to the terminal, not through ``sys.stdout``)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(inert(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):  # flush, fileno, isatty, encoding, buffer, …: the stream's own
        return getattr(self._stream, name)


# Links: a course's Markdown may carry `[text](target)`, and a click hands the target to the
# learner's browser (webbrowser.open in a terminal, window.open in browser mode). Only a web
# address is handed on: `javascript:` would run in the tutor page's origin in browser mode,
# `file:` would open the learner's own files, and other schemes start whatever handler the
# desktop has registered for them.
OPENABLE_SCHEMES = frozenset({"http", "https"})


def openable_link(target: str) -> str | None:
    """Why ``target`` is not handed to a browser, or None when it is a plain web address."""
    from urllib.parse import urlsplit

    if not isinstance(target, str) or not target:
        return "the link is empty"
    if target != inert(target) or any(ch.isspace() for ch in target) or len(target) > 2000:
        return "the link holds spaces or control characters"
    try:
        parts = urlsplit(target)
    except ValueError:
        return "the link is not an address"
    if parts.scheme.lower() not in OPENABLE_SCHEMES:
        return f"only http and https links are opened, not {parts.scheme or 'a relative'} links"
    if not parts.hostname or parts.username is not None or parts.password is not None:
        return "the link names no plain host"
    return None
