"""The trace through the real sandbox: rows over the typed wire, and `check` proving first-divergence drills.

Every tier runs the rewriter in its confined child; the rows come back as checked data
(``wire/trace.py``), never pickled. ``check`` takes a first-divergence drill's answer from
the trace of the real run: a wrong declared answer, a wrong answer that is right, and a
solution that still breaks a contract are each named.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from tutor.commands.authoring import check
from tutor.sandbox.client import run_sync
from tutor.sandbox.wire import RunRequest, TraceSpec

pytestmark = pytest.mark.slow

COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "divergence_course"


def test_a_traced_run_sends_its_rows_from_the_confined_child(sb):
    code = ("x = torch.ones(2, 3, requires_grad=True)\n"
            "y = (x * 2).t()\n"
            "def step(a):\n"
            "    b = a.sum()\n"
            "    return b\n"
            "loss = step(y)\n"
            "loss.backward()\n"
            "bad = torch.log(torch.zeros(2))\n")
    result = run_sync(RunRequest(code=code, setup="import torch",
                                 trace=TraceSpec(function="step", holds=(("x", "x.grad is not None"),))), sb)
    assert result.ok, result.message
    obs = result.observation
    assert obs.error is None
    rows = [(r.line, r.scope, tuple(s.name for s in r.names)) for r in obs.trace.rows]
    assert rows == [(1, "", ("x",)), (2, "", ("y",)), (4, "step", ("a", "b")), (6, "", ("loss",)),
                    (7, "", ("x",)), (8, "", ("bad",))]
    y = obs.trace.rows[1].names[0]
    assert (y.shape, y.stride, y.grad_fn, y.is_leaf) == ((3, 2), (1, 3), "TBackward0", False)
    assert obs.trace.rows[4].names[0].has_grad and obs.trace.rows[4].holds == (("x", "true"),)
    assert obs.trace.rows[0].holds == (("x", "false"),)
    bad = obs.trace.rows[5].names[0]
    assert bad.min == bad.max == float("-inf") and bad.inf == 2
    assert "x" in obs.variables  # the recorder is gone before the runner describes the names


def test_a_traced_run_that_raises_reports_its_line_and_the_rows_before(sb):
    result = run_sync(RunRequest(code="a = torch.ones(2)\nb = a @ torch.ones(3)\nc = a + 1\n", setup="import torch",
                                 trace=TraceSpec()), sb)
    obs = result.observation
    assert obs.error.type == "RuntimeError" and obs.error.line == 2
    assert [r.line for r in obs.trace.rows] == [1]


def test_check_proves_the_fixture_packs_drills(shared_sandbox):
    out = io.StringIO()
    assert check([COURSE], out) == 0, out.getvalue()


def check_changed_pack(tmp_path, *replacements: tuple[str, str]) -> str:
    """``check``'s report on a copy of the fixture pack with each (old, new) replaced once; it must fail."""
    pack = tmp_path / "pack"
    shutil.copytree(COURSE, pack)
    module = pack / "01_divergence.yaml"
    text = module.read_text()
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new, 1)
    module.write_text(text)
    out = io.StringIO()
    assert check([pack], out) == 1
    return out.getvalue()


def test_check_names_a_wrong_declared_answer_a_right_wrong_answer_and_a_solution_that_still_fails(tmp_path):
    report = check_changed_pack(tmp_path, ("    answer: 1\n", "    answer: 2\n"),
                                ("{answer: 4, misconception", "{answer: 1, misconception"),
                                ("scaled = batch / norm.clamp_min(1e-6)", "scaled = batch / norm"))
    assert ("answer: the drill declares line 2, but the trace first fails on line 1: img max 255.0, "
            "contract range [0, 1]") in report
    assert "wrong answer '1' is right: the trace first fails on line 1" in report
    assert "solution: a contract still fails, line 3 (in step): scaled has 3 NaN, contract finite" in report


FORGE_A_FAILING_ROW = """
rec = next(v for v in list(globals().values()) if type(v).__name__ == "Recorder")
Row, State = type(rec.rows[0]), type(rec.rows[0].names[0])
rec.rows.insert(0, Row(1, names=(State("img", shape=(2, 4, 4, 3), dtype="torch.float32", min=0.0, max=255.0,
                                       mean=1.0, nan=0, inf=0),)))
"""
HIDE_EVERY_ROW = """
rec = next(v for v in list(globals().values()) if type(v).__name__ == "Recorder")
rec.rows.clear()
type(rec)._record = lambda *args: None
"""


def test_rows_forged_by_the_learners_code_change_no_verdict(sb):
    from tutor.course.loader import load_course
    from tutor.grading import divergence_request, grade

    drill = load_course(COURSE).slot("01").module.drill("pixel-scale")
    repaired = grade(drill, {}, run_sync(divergence_request(drill, drill.solution + FORGE_A_FAILING_ROW), sb))
    assert repaired.contract_failures and repaired.contract_failures[0].detail.startswith("img max 255.0")  # forged
    assert repaired.code_passes, repaired.check_message  # the judge saw the final values: every contract holds
    unchanged = grade(drill, {}, run_sync(divergence_request(drill, HIDE_EVERY_ROW + drill.code), sb))
    assert not unchanged.contract_failures  # forged: no row at all
    assert not unchanged.code_passes
    assert unchanged.check_message.startswith("img spans 0 to "), unchanged.check_message


def test_check_names_a_drill_whose_code_would_pass_unchanged_and_a_holds_false_before_the_code(tmp_path):
    report = check_changed_pack(
        tmp_path,
        # pixel-scale: only img's contract, and the code rescales img at its end: its final values keep it
        ("      x: {shape: [B, 3, H, W]}\n      centered: {range: [-0.5, 0.5]}\n      loss: {finite: true}\n", ""),
        ("      loss = centered.mean()\n    contracts:", "      loss = centered.mean()\n      img = img / 255\n"
                                                        "    contracts:"),
        # nan-in-step: a holds on w that setup already breaks
        ('w: {holds: "w.grad is None or bool(torch.isfinite(w.grad).all())"}', 'w: {holds: "bool((w < 0).all())"}'))
    assert ("the code's final values keep every contract (judge's check passed), so the code left unchanged "
            "would count as repaired") in report
    assert ("answer: the drill declares line 3, but the trace first fails on before the code (after setup): "
            "`bool((w < 0).all())` is false") in report
