"""Plain mode reads each view as text: the drill's declared views after its run, ``:view`` on any name."""

from __future__ import annotations

import io
from pathlib import Path

from tutor.course.loader import load_course
from tutor.plain.plain_tutor import run_plain
from tutor.progress.store import ProfileStore
from tutor.session import Session

VIEWS_COURSE = Path(__file__).parents[1] / "fixtures" / "views_course"


def test_plain_mode_prints_each_view_after_the_reveal_and_opens_any_other(tmp_path, scripted_sandbox):
    answers = "\n".join([
        "01",
        ":view storage y",   # before the run: refused, nothing runs
        "(3, 1)", "",        # wrong: the run shows the declared views
        ":view storage x",   # at the next prompt: a view of another name
        ":view loss",        # unreadable: the usage, nothing runs
        ":view module model opt",
        "(1, 3)", "",
        ":quit",
    ]) + "\n"
    course = load_course(VIEWS_COURSE)
    store = ProfileStore.open(tmp_path / "p.sqlite")
    out = io.StringIO()
    assert run_plain(Session(course, store), "default", io.StringIO(answers), out, scripted_sandbox) == 0
    text = out.getvalue()
    before_run = text.index("Running in the sandbox")
    assert "Views open once this drill has run" in text[:before_run]
    assert "Storage under" not in text[:before_run] and "Autograd graph" not in text[:before_run]
    # the declared views, in the run's report
    assert "Storage under y: 6 cells of float32 (4 bytes each); also reached by x." in text
    assert "y float32: shape (3, 2), stride (1, 3), offset 0, not contiguous" in text
    assert "Index rule: y[1, 1] is at cell offset + i·stride₀ + j·stride₁ = 0 + 1·1 + 1·3 = 4 (value 4.)" in text
    assert "[0] SumBackward0 ← [1]" in text and "AccumulateGrad: leaf w (3,)" in text
    assert "Registered parameters no group holds: bias — step() never changes them." in text
    # the ones opened by name
    assert "Storage under x: 6 cells of float32 (4 bytes each); also reached by y." in text
    assert "Type a view and a name" in text
    assert "weight (1, 3) float32, requires grad, in optimizer group 0" in text
    assert "Verified ✓ right." in text
    assert "\x1b" not in text
    assert [a.kind for a in store.attempts()] == ["prediction", "prediction"]  # views record nothing
