"""Small wording rules every front end shares: "1 answer", "2 answers" (never "1 answers" or "item(s)")."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number ``n`` takes: count(1, "answer") == "1 answer"."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def shown_title(drill) -> str:
    """A drill's title after its label: a lab's "Lab: …" title is not told "lab 3/9: Lab: …" twice."""
    title = drill.title
    return title[len("Lab: "):] if drill.is_exercise and title.startswith("Lab: ") else title


def drill_label(drill) -> str:
    """What a drill is called where it is introduced ("repair drill 3/9"): its kind, in the learner's words."""
    if drill.is_exercise:  # one word on every screen and in the README: "lab"
        return "lab"
    if drill.is_first_divergence:  # a repair too, but one that first asks where the code goes wrong
        return "first-divergence drill"
    return "repair drill" if drill.is_repair else "drill"
