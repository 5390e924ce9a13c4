"""Plain mode through a first-divergence drill, read as text: the answer forms, the feedback, the trace, the repair."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tutor.course.loader import load_course
from tutor.plain.plain_tutor import run_plain
from tutor.progress.store import ProfileStore
from tutor.session import Session

COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "divergence_course"
REPAIR = """\
img = raw.float() / 255
img = img.clamp(0, 1)
x = img.permute(0, 3, 1, 2)
centered = x - 0.5
loss = centered.mean()
."""


@pytest.fixture
def divergence_course():
    course = load_course(COURSE)
    assert not course.all_errors(), course.all_errors()
    return course


def run(tmp_path, course, sandbox, lines: list[str]) -> tuple[str, ProfileStore]:
    store = ProfileStore.open(tmp_path / "p.sqlite")
    out = io.StringIO()
    assert run_plain(Session(course, store), "default", io.StringIO("\n".join(lines) + "\n"), out, sandbox) == 0
    return out.getvalue(), store


def test_a_first_divergence_drill_in_plain_mode(tmp_path, divergence_course, scripted_sandbox):
    text, store = run(tmp_path, divergence_course, scripted_sandbox, [
        "01",
        "somewhere",        # garbage: a clear message, nothing runs
        ":trace",           # not before the first prediction
        "line 4", "",       # wrong (a listed misconception)
        "L1", "",           # right
        "img = raw.float()", ".",   # a repair that changes nothing: a contract still fails
        *REPAIR.splitlines(),
        ":quit",
    ])
    assert "'somewhere' is not a line number: give a line of the code as N, line N or LN, or a stage: convert, layout" \
        in text
    assert "The trace opens after your first prediction is checked." in text
    assert ("First divergence: You chose line 4, but a contract already fails earlier, on line 1 (stage convert): "
            "img max 255.0, contract range [0, 1]") in text
    assert "Your answer “line 4” reveals a common misconception: the values go wrong where they are shifted" in text
    assert "Trace (one row per line that changed a tensor" in text
    assert "  line 3        x: shape [2, 3, 4, 4]  dtype float32  stride (48, 1, 12, 3)  offset 0  shares img" in text
    assert "                ^ first failure: line 1: img max 255.0, contract range [0, 1]" in text
    assert "you said line 1; observed line 1 (stage convert) — ✓ right" in text
    assert "== 01 first-divergence drill 1/2: Preparing an image batch" in text  # its kind, not "repair drill"
    # the check is the judge's, on the final values (the rows above came from the code's own process)
    assert "Check of the code: failed — img spans 0 to 255, contract range [0, 1]" in text
    assert "Repaired ✓ — the reference solution:" in text
    assert "\x1b" not in text
    kinds = [(a.kind, a.correct) for a in store.attempts()]
    assert kinds == [("prediction", False), ("prediction", True), ("repair", False), ("repair", True)]
    # like any repair drill: done once the line is named and the code repaired; the missed first try made a card
    session = Session(divergence_course, store)
    assert session.drill_done("01", "pixel-scale") and not session.drill_done("01", "nan-in-step")
    assert session.review.card("01", "pixel-scale") is not None
    assert store.attempts()[0].verdict["first-divergence"]["divergence"].startswith("You chose line 4")


def test_a_trace_until_hint_shows_the_rows_before_the_failing_one(tmp_path, divergence_course, scripted_sandbox):
    text, _store = run(tmp_path, divergence_course, scripted_sandbox, ["01", ":skip", ":hint", ":quit"])
    assert "Hint 1/2: Read the trace up to line 2: does every contract still hold there?" in text
    hint = text[text.index("Hint 1/2"):]
    assert "norm: shape [2, 1]" in hint and "The trace up to line 2 (a hint: the rest stays hidden)." in hint
    assert "scaled" not in hint.split("The trace up to line 2")[0]  # the failing row (line 3) stays hidden
