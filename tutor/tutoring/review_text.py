"""How a due review item is named and dated, the same on the review screen and in `review --list`."""

from __future__ import annotations

from datetime import datetime, timezone

from tutor.progress.review import DueItem
from tutor.safe_text import inert
from tutor.wording import count

QUESTION_SHOWN = 70


def due_title(course, item: DueItem) -> str:
    """The drill's title or the self-check's question (clipped), never its id; the id if it is gone."""
    slot = course.slot(item.module)
    module = slot.module if slot is not None else None
    if module is not None:
        drill = module.drill(item.item)
        if drill is not None:
            return inert(drill.title)
        check = next((c for c in module.self_checks if c.id == item.item), None)
        if check is not None:
            question = " ".join(inert(check.question).split())
            return question if len(question) <= QUESTION_SHOWN else question[:QUESTION_SHOWN - 1] + "…"
    return inert(item.item)


def due_kind(item: DueItem) -> str:
    return "drill" if item.kind == "drill" else "self-check"


def due_when(due: datetime, now: datetime | None = None) -> str:
    """"due now" in its first minute, then "due 5 min ago", "due 3 h ago", "due 2 days ago"."""
    minutes = int(((now or datetime.now(timezone.utc)) - due).total_seconds() // 60)
    if minutes < 1:
        return "due now"
    if minutes < 60:
        return f"due {minutes} min ago"
    if minutes < 60 * 48:
        return f"due {minutes // 60} h ago"
    return f"due {count(minutes // (60 * 24), 'day')} ago"


def due_summary(n: int) -> str:
    return f"{count(n, 'item')} due"
