"""Which instance of a variant drill the learner predicts: never one whose answers they have been shown.

A drill with ``variants:`` (tutor.course.variants) is predicted on an *instance*, drawn from a seed.
Once a prediction of an instance has run, its observation and explanation are on the screen, so
that instance can no longer certify anything: the next prediction (a retry after a wrong answer,
a spaced review, a reopened drill) is of a fresh instance, one not answered before while one is
left. The seed of the open instance is kept with the drill's drafts (a reopened drill shows the same
instance and its typed answers) and written into each recorded prediction's note, with the
instance in words, so the profile says which instance every verdict rests on.

A verified drill revisited (not due) shows the instance that verified it, beside its answers.
"""

from __future__ import annotations

import random
from typing import Iterable

from tutor.course.schema import Drill
from tutor.course.variants import instance_text, present_drill_instance
from tutor.progress.store import ATTEMPT_NOTE, Attempt

_DRAWS = 64  # seeds tried for an instance not answered before (the space is usually far smaller)
_SEEDS = random.SystemRandom()


def key(drill: Drill) -> str:
    """The instance a drill was rendered for, in words ("rows=2, cols=5"); "" for a drill without variants."""
    return instance_text(drill.instance) if drill.variants is not None and drill.instance else ""


def note(drill: Drill, seed: int | None) -> dict:
    """What a recorded prediction says about its instance (merged into the attempt's note)."""
    shown = key(drill)
    if not shown:
        return {}
    return {"instance": shown} if seed is None else {"instance": shown, "seed": seed}


def answered(predictions: Iterable[Attempt]) -> list[str]:
    """The instances already predicted (their answers shown), oldest first."""
    out = []
    for attempt in predictions:
        shown = (attempt.verdict.get(ATTEMPT_NOTE) or {}).get("instance")
        if isinstance(shown, str) and shown:
            out.append(shown)
    return out


def verified_on(drill: Drill, attempt: Attempt) -> bool:
    """``attempt`` predicted the instance ``drill`` shows (one recorded before the drill had variants
    predicted its base instance, the one the loader gives)."""
    if drill.variants is None:
        return True
    shown = answered([attempt])
    if shown:
        return shown == [key(drill)]
    return drill.instance == present_drill_instance(drill.template or drill, None).instance


def verified_seed(predictions: Iterable[Attempt]) -> int | None:
    """The seed of the instance whose right prediction verified the drill last."""
    seed = None
    for attempt in predictions:
        if attempt.correct:
            value = (attempt.verdict.get(ATTEMPT_NOTE) or {}).get("seed")
            seed = value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else seed
    return seed


def seed_matches(drill: Drill, seed: int | None) -> bool:
    """``seed`` draws the very instance ``drill`` shows (what is recorded must be what was seen)."""
    return seed is not None and drill.variants is not None and \
        present_drill_instance(drill.template or drill, seed).instance == drill.instance


def fresh_seed(drill: Drill, avoid: Iterable[str]) -> int:
    """A seed whose instance is none of ``avoid`` while such an instance exists (else not the last one)."""
    spec = drill.variants
    assert spec is not None
    avoid = list(avoid)
    names = {instance_text(i) for i in spec.instances}
    unseen_left = bool(names - set(avoid))
    last = avoid[-1] if avoid else None
    seed = _SEEDS.randrange(2**31)
    for _ in range(_DRAWS):
        shown = instance_text(spec.draw(seed))
        if (shown not in avoid) if unseen_left else (shown != last):
            return seed
        seed = _SEEDS.randrange(2**31)
    return seed


def choose(drill: Drill, predictions: list[Attempt], open_seed: int | None, done: bool, due: bool
           ) -> tuple[Drill, int | None, bool]:
    """(the instance to present, its seed, whether it is newly drawn): see the module's docstring."""
    template = drill.template or drill
    shown = answered(predictions)
    opened = present_drill_instance(template, open_seed) if open_seed is not None else None
    if opened is not None and key(opened) not in shown:
        return opened, open_seed, False  # the open instance, never answered (a drill done: opened to practise)
    if done and not due:
        # revisited: the instance that verified it (a drill verified before it had variants was verified
        seed = verified_seed(predictions)  # on the base instance, the loaded drill)
        return present_drill_instance(template, seed), seed, False
    seed = fresh_seed(template, shown)
    return present_drill_instance(template, seed), seed, True
