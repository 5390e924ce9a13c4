"""Lesson Markdown as readable plain text, for plain mode (screen readers, scripts).

No ``**``, no backticks, no ``#`` heading marks: emphasis and inline code lose their
marks, links keep their text and address, fenced code is indented, lists keep their
bullets. What is left reads aloud as a sentence.
"""

from __future__ import annotations

import re

EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1|(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\3(?![\w*])")
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
NOT_EXECUTED = re.compile(r"^\s*(?:\*{1,2}|_)?not executed here\.?(?:\*{1,2}|_)?\s*", re.IGNORECASE)


def _inline(text: str) -> str:
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: leave it
        parts = [text]
    out = []
    for i, part in enumerate(parts):
        if i % 2:  # inside `code`: as written
            out.append(part)
            continue
        part = LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", part)
        for _ in range(2):  # **bold *nested* text**
            part = EMPHASIS.sub(lambda m: m.group(2) if m.group(2) is not None else m.group(4), part)
        out.append(part)
    return "".join(out)


def markdown_to_plain(markdown: str) -> str:
    """``markdown`` (already made inert) as plain text; paragraphs joined, fences indented."""
    lines: list[str] = []
    in_fence = False
    for raw in markdown.strip("\n").splitlines():
        if raw.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            lines.append("    " + raw)
        else:
            lines.append(_inline(HEADING.sub("", raw)))
    return "\n".join(lines).strip("\n")


def without_not_executed(note: str) -> str:
    """A GPU note without its own leading "*Not executed here.*": every front end labels the note so."""
    return NOT_EXECUTED.sub("", note.strip(), count=1)


def gpu_note_text(note: str) -> str:
    """A GPU note as plain text, for plain mode's "On a GPU (not executed here): " label."""
    return markdown_to_plain(without_not_executed(note))
