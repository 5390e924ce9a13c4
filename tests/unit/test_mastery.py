"""The per-mechanism estimate (BKT per tag) and the weak-spot practice it drives."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tutor.progress import mastery
from tutor.progress.mastery import (PRIOR, estimate, interleave, predicted_correct, update, weak_spot_queue,
                                    weakest)
from tutor.progress.store import Attempt


def _course(**modules: dict[str, tuple[str, ...]]):
    """A course stand-in: module id -> {drill id: tags} (the estimate reads only ids and tags)."""
    return SimpleNamespace(modules=lambda: [
        SimpleNamespace(id=mid, drills=[SimpleNamespace(id=did, tags=tags) for did, tags in drills.items()])
        for mid, drills in modules.items()])


COURSE = _course(m01={"a": ("views",), "b": ("views", "strides"), "c": ("dtype",), "r": ("repair", "views")},
                 m02={"d": ("views",), "e": ("dtype",), "f": ("broadcast",)})


def _wrong(module, item, misconception=""):
    return Attempt(module, item, "prediction", False,
                   verdict={"shape": {"correct": False, "divergence": "", "misconception": misconception}})


def _right(module, item):
    return Attempt(module, item, "prediction", True, verdict={"shape": {"correct": True, "misconception": ""}})


def test_updates_move_the_right_way():
    assert update(PRIOR, True) > PRIOR
    assert update(PRIOR, False) < PRIOR
    assert update(0.9, False, misconception=True) < update(0.9, False) < 0.9
    assert 0 < predicted_correct(0.0) < predicted_correct(1.0) < 1
    known = PRIOR
    for _ in range(6):
        known = update(known, True)
    assert known >= mastery.MASTERED


def test_misconception_evidence_moves_only_the_tagged_mechanisms():
    plain = estimate(COURSE, [_right("m01", "a"), _right("m01", "a"), _wrong("m01", "b")])
    revealed = estimate(COURSE, [_right("m01", "a"), _right("m01", "a"), _wrong("m01", "b", "a view copies")])
    assert revealed["views"].known < plain["views"].known
    assert revealed["strides"].known < plain["strides"].known
    assert revealed["dtype"].known == plain["dtype"].known == PRIOR and revealed["dtype"].attempts == 0
    assert revealed["views"].held == {"a view copies": ("m01", "b")}
    assert "repair" not in revealed  # a kind, not a mechanism


def test_a_misconception_stops_being_held_when_its_drill_is_answered_right():
    mechanisms = estimate(COURSE, [_wrong("m01", "b", "a view copies"), _right("m01", "b")])
    assert mechanisms["views"].held == {}
    still = estimate(COURSE, [_wrong("m01", "b", "a view copies"), _right("m01", "a")])
    assert still["views"].held == {"a view copies": ("m01", "b")}


def test_weakest_lists_met_unmastered_mechanisms_least_known_first():
    attempts = [_wrong("m01", "c", "sums are floats"), _wrong("m02", "f"), _right("m02", "d"), _right("m01", "a")]
    names = [m.tag for m in weakest(estimate(COURSE, attempts))]
    assert names[:2] == ["dtype", "broadcast"] and "strides" not in names  # strides never met
    assert len(names) == 3


def test_weak_spot_queue_offers_other_drills_on_the_mechanism_first():
    mechanisms = estimate(COURSE, [_wrong("m01", "c", "sums are floats")])
    assert weak_spot_queue(mechanisms, []) == [("m02", "e"), ("m01", "c")]
    assert weak_spot_queue(mechanisms, [], open_modules={"m01"}) == [("m01", "c")]
    assert mechanisms["dtype"].testing_drills() == [("m02", "e"), ("m01", "c")]
    assert weak_spot_queue(estimate(COURSE, [_wrong("m02", "f")]), []) == []  # no misconception: nothing scheduled


def test_weak_spots_are_interleaved_never_ahead_of_new_work():
    new = [("m02", "x"), ("m02", "y"), ("m02", "z"), ("m02", "w")]
    weak = [("m01", "c"), ("m02", "e"), ("m02", "y")]
    out = interleave(new, weak, every=2)
    assert out[0] == new[0]
    assert [k for k in out if k in new] == new  # new work keeps its order, none dropped
    assert out == [new[0], new[1], ("m01", "c"), new[2], new[3], ("m02", "e")]
    assert interleave([], weak) == [("m01", "c"), ("m02", "e"), ("m02", "y")]

