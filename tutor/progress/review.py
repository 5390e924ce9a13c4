"""Spaced review with FSRS: missed drills and self-check questions become cards.

A card is reviewed whenever the learner meets its item again once it is due,
wherever that happens (the review screen, the module, plain mode); the rating
comes from what happened, so most reviews need no self-rating. Free-text
self-checks are the exception: only the learner can compare their answer with
the model answer, so they rate themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable

from fsrs import Card, Rating, Scheduler

from tutor.progress.store import ProfileStore

Clock = Callable[[], datetime]

SELF_RATINGS = {1: Rating.Again, 2: Rating.Hard, 3: Rating.Good, 4: Rating.Easy}
SELF_RATING_WORDS = {1: "missed it", 2: "partly", 3: "got it", 4: "easy"}
LEARNING_STEP = timedelta(hours=4)
SLOW_SECONDS = 90.0
QUICK_SECONDS = 30.0


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def rating_for(correct: bool, confidence: int | None = None, seconds: float = 0.0) -> Rating:
    """How well an item was recalled, from the outcome, the stated confidence and the time taken."""
    if not correct:
        return Rating.Again
    if confidence == 1 or seconds > SLOW_SECONDS:
        return Rating.Hard  # right, but a guess or a struggle
    if confidence == 3 and seconds < QUICK_SECONDS:
        return Rating.Easy
    return Rating.Good


@dataclass(frozen=True)
class DueItem:
    module: str
    item: str
    kind: str  # "drill" | "self_check"
    due: datetime


class ReviewQueue:
    def __init__(self, store: ProfileStore, clock: Clock = utc_now):
        self.store = store
        self.clock = clock
        # No fuzzing: the same history always gives the same schedule (and testable dates).
        # One learning step of hours, not FSRS's flash-card default of 1 and 10 minutes: an item
        # reaches review after the learner met it in its lesson, so "got it" graduates at once
        # (due in days) and a miss comes back later the same day, not while its answer is on screen.
        self.scheduler = Scheduler(enable_fuzzing=False, learning_steps=(LEARNING_STEP,),
                                   relearning_steps=(LEARNING_STEP,))

    def _cards(self) -> dict[tuple[str, str], tuple[str, Card]]:
        out = {}
        for module, item, kind, raw in self.store.cards():
            try:
                out[(module, item)] = (kind, Card.from_json(raw))
            except (ValueError, KeyError, TypeError):
                continue  # a damaged card is dropped; the item comes back when next missed
        return out

    def card(self, module: str, item: str) -> Card | None:
        found = self._cards().get((module, item))
        return found[1] if found else None

    def due(self, now: datetime | None = None) -> list[DueItem]:
        now = now or self.clock()
        items = [DueItem(m, i, kind, card.due) for (m, i), (kind, card) in self._cards().items() if card.due <= now]
        return sorted(items, key=lambda d: d.due)

    def upcoming(self) -> list[DueItem]:
        return sorted((DueItem(m, i, kind, card.due) for (m, i), (kind, card) in self._cards().items()),
                      key=lambda d: d.due)

    def is_due(self, module: str, item: str) -> bool:
        card = self.card(module, item)
        return card is not None and card.due <= self.clock()

    def review(self, module: str, item: str, kind: str, rating: Rating, seconds: float = 0.0) -> Card:
        """Rate an item: creates its card the first time, then reschedules it."""
        card = self.card(module, item) or Card()
        card, _log = self.scheduler.review_card(card, rating, review_datetime=self.clock(),
                                                review_duration=int(seconds * 1000))
        self.store.save_card(module, item, kind, card.to_json())
        return card

    def merge_card(self, module: str, item: str, kind: str, raw: str) -> None:
        """Keep whichever card was reviewed last (used when importing another machine's profile)."""
        incoming = Card.from_json(raw)
        current = self.card(module, item)
        if current is None or (incoming.last_review or datetime.min.replace(tzinfo=timezone.utc)) > (
                current.last_review or datetime.min.replace(tzinfo=timezone.utc)):
            self.store.save_card(module, item, kind, incoming.to_json())
