"""A third public exercise set ported into the lesson format (issue 33): numpy-100 as a pip-installable pack.

``tests/packs/numpy100-torch/`` is the pack project an author would have after ``pytorch-tutor new course``:
16 drills built on 21 exercises of numpy-100 by Nicolas P. Rougier (MIT licence) in PyTorch. Its validate must stay free of
errors and warnings (the give-away check included), and every drill's claims must hold under ``check``.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tutor.commands.authoring import check, validate

PACK = Path(__file__).resolve().parent / "packs" / "numpy100-torch"


def test_the_numpy100_pack_validates_without_warnings():
    out = io.StringIO()
    assert validate([PACK], out) == 0, out.getvalue()
    said = out.getvalue().splitlines()
    assert said[-1].startswith("validate: ok") and "warning" not in said[-1], out.getvalue()
    # every line but the summaries is a warning or an error at file:line
    assert [line for line in said if "modules in the course" not in line and not line.startswith("validate:")] == [], \
        out.getvalue()


@pytest.mark.slow
def test_the_numpy100_pack_checks():
    out = io.StringIO()
    assert check([PACK], out) == 0, out.getvalue()
    assert "FAIL" not in out.getvalue(), out.getvalue()
