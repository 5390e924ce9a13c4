"""A pack written once keeps working: a frozen copy of every documented field validates and checks on every commit.

``tests/fixtures/frozen_pack/`` stands for the packs authors wrote against the format as it was on
2026-12-05: formats 1, 2 and 3, labs with helpers, data, rules, property tests, chained stages,
fixtures and extended stages, first-divergence drills (one whose bug moves, with wrong repairs),
views, variants, a drill's thread count, `renamed:` and both kinds of self-check. Its files must
never be edited (their digests are pinned below): a change to the tutor that would make them fail
is a change that breaks authors' packs, so it bumps `format_version` and ships a migration.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from tutor.commands.authoring import check, validate

PACK = Path(__file__).resolve().parent / "fixtures" / "frozen_pack"
FROZEN = {
    "01_first.yaml": "ae2c5679a14faaf1",
    "02_second.yaml": "1ef269a23573b859",
    "03_puzzles.yaml": "5fca34a7317f26a8",
    "04_divergence.yaml": "a1f3ae341142cf53",
    "05_views.yaml": "e0fdb9bd793e7c56",
    "06_sums.yaml": "fc843e5cdbfbfe43",
    "07_december.yaml": "562f171dcc6a84d9",
    "course.yaml": "6f1570c02fe09aa2",
    "data/rowsum_cases.json": "b1e27de0bbafbb37",
    "helpers/puzzles.py": "6dd19584b157fe79",
}


def test_the_frozen_pack_is_as_it_was_written():
    found = {p.relative_to(PACK).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()[:16]
             for p in sorted(PACK.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}
    assert found == FROZEN, ("the frozen pack changed: it stands for packs already written, so leave it as it is; "
                             "a tutor change that breaks it bumps format_version and ships a migration")


def test_the_frozen_pack_validates():
    out = io.StringIO()
    assert validate([PACK], out) == 0, out.getvalue()
    assert "error" not in out.getvalue().lower(), out.getvalue()


@pytest.mark.slow
def test_the_frozen_pack_checks():
    out = io.StringIO()
    assert check([PACK], out) == 0, out.getvalue()
    assert "FAIL" not in out.getvalue()
