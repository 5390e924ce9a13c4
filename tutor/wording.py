"""Small wording rules every front end shares: "1 answer", "2 answers" (never "1 answers" or "item(s)")."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number ``n`` takes: count(1, "answer") == "1 answer"."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"
