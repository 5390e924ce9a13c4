"""The sandbox tier is an ordered type: strength decides, never the strings ("none" < "1" as text)."""

from __future__ import annotations

import pytest

from tutor.sandbox import client
from tutor.sandbox.client import TIER_LABELS, Sandbox
from tutor.sandbox.layers import describe_layers
from tutor.sandbox.wire import Tier


def test_tiers_order_by_strength_not_by_their_text():
    assert Tier.NAMESPACES > Tier.LANDLOCK > Tier.WEAK > Tier.NONE
    assert sorted([Tier.NONE, Tier.NAMESPACES, Tier.WEAK, Tier.LANDLOCK]) == [Tier.NONE, Tier.WEAK, Tier.LANDLOCK,
                                                                            Tier.NAMESPACES]
    assert "none" > "1"  # what comparing the strings said
    assert Tier("none") < Tier("1")
    assert [t.confines_third_party for t in Tier] == [True, True, False, False]
    assert set(TIER_LABELS) == set(Tier)


def test_a_tier_never_compares_with_a_string():
    with pytest.raises(TypeError):
        Tier.NONE < "1"  # noqa: B015
    with pytest.raises(TypeError):
        "2" <= Tier.LANDLOCK  # noqa: B015
    assert Tier.LANDLOCK == "2" and {Tier.LANDLOCK: 1}["2"] == 1  # the wire's values read back as themselves


@pytest.mark.parametrize("forced, best, chosen, noted", [
    ("1", "2", Tier.LANDLOCK, True),  # a stronger tier than the machine gives: the best there is, and a note
    ("1", "3", Tier.WEAK, True),
    ("2", "3", Tier.WEAK, True),
    ("2", "1", Tier.LANDLOCK, False),  # weaker than the best: granted
    ("1", "1", Tier.NAMESPACES, False),
    (None, "2", Tier.LANDLOCK, False),
    (None, "garbage", Tier.WEAK, False),  # a probe that says nothing usable reads as the weak tier
])
def test_a_forced_tier_is_met_or_noted_by_strength(monkeypatch, forced, best, chosen, noted):
    monkeypatch.setattr(client, "probe", lambda python: {"tier": best, "landlock_abi": 3, "seccomp_arch": True})
    box = Sandbox(tier=forced)
    assert box.choose_tier() is chosen
    assert bool(box.tier_note) == noted
    assert box.can_confine_third_party == chosen.confines_third_party


def test_the_weak_tiers_need_no_probe(monkeypatch):
    def no_probe(python):
        raise AssertionError("probed")

    monkeypatch.setattr(client, "probe", no_probe)
    assert Sandbox(tier="none").choose_tier() is Tier.NONE
    assert Sandbox(tier=Tier.WEAK).choose_tier() is Tier.WEAK
    with pytest.raises(ValueError):
        Sandbox(tier="4")


def test_layers_read_the_tier_of_the_zygotes_facts():
    assert describe_layers({"tier": "none"})["landlock"] == "off (not used)"
    assert "not in this tier" in describe_layers({"tier": "2", "landlock_abi": 3, "seccomp": True})["pid namespace"]
