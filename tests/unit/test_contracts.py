"""Contracts against trace rows (``tutor/judge/contracts.py``) and the learner's answer forms (``judge/divergence.py``)."""

from __future__ import annotations

import math

import pytest

from tutor.course.divergence_fields import CodeStage, Contract, FirstDivergence
from tutor.judge import read_answer
from tutor.judge.contracts import failures, first_failure
from tutor.judge.divergence import LineAnswerError, divergence_text, is_right, misconception, parse_line
from tutor.sandbox.wire import ErrorInfo
from tutor.sandbox.wire.trace import TensorState, Trace, TraceRow


def tensor(name, shape=(2,), dtype="torch.float32", **kw) -> TensorState:
    return TensorState(name=name, shape=tuple(shape), dtype=dtype, device="cpu", layout="strided", **kw)


def trace(*rows) -> Trace:
    return Trace(rows=[TraceRow(line=line, names=tuple(states)) for line, *states in rows])


def test_a_symbol_binds_on_first_sight_and_must_agree_afterwards_across_names():
    contracts = (Contract("x", shape=("B", 3, "H", "W")), Contract("y", shape=("B", "C")))
    rows = trace((1, tensor("x", (4, 3, 8, 8))), (2, tensor("y", (4, 10))), (3, tensor("y", (8, 10))))
    first = first_failure(rows, contracts)
    assert (first.line, first.name) == (3, "y")
    assert first.text == "line 3: y shape [8, 10] (B was 4, here it is 8), contract shape [B, C]"
    assert first_failure(trace((1, tensor("x", (4, 3, 8, 8))), (2, tensor("y", (4, 10)))), contracts) is None


def test_a_shape_with_the_wrong_rank_or_a_fixed_size_fails():
    c = (Contract("x", shape=("B", 3, "H", "W")),)
    assert "the contract has 4" in first_failure(trace((1, tensor("x", (4, 32, 32)))), c).shown
    assert "dimension 1 is 32, not 3" in first_failure(trace((2, tensor("x", (4, 32, 32, 3)))), c).shown


def test_range_and_finite_on_int_bool_and_float_tensors():
    ints = trace((1, tensor("ids", (3,), "torch.int64", min=0.0, max=255.0, mean=9.0, nan=0, inf=0)))
    assert first_failure(ints, (Contract("ids", range=(0, 1)),)).shown == "ids max 255.0"
    assert first_failure(ints, (Contract("ids", range=(0, 255)),)) is None
    assert first_failure(ints, (Contract("ids", finite=True),)) is None
    bools = trace((1, tensor("m", (3,), "torch.bool", min=0.0, max=1.0, mean=0.5, nan=0, inf=0)))
    assert first_failure(bools, (Contract("m", range=(0, 1)),)) is None
    nan = trace((1, tensor("loss", (), min=None, max=None, mean=None, nan=1, inf=0)))
    assert first_failure(nan, (Contract("loss", finite=True),)).shown == "loss has 1 NaN"
    assert first_failure(nan, (Contract("loss", range=(0, 10)),)).shown == "loss has 1 NaN"
    inf = trace((1, tensor("z", min=-1.0, max=math.inf, nan=0, inf=1)))
    assert first_failure(inf, (Contract("z", finite=True),)).shown == "z has 1 Inf"


def test_unmeasured_statistics_do_not_fail_a_range_but_a_complex_tensor_has_no_order():
    meta = trace((1, tensor("m", min=None, max=None, nan=None, inf=None)))
    assert first_failure(meta, (Contract("m", range=(0, 1)),)) is None
    cplx = trace((1, tensor("c", dtype="torch.complex64", nan=0, inf=0)))
    assert "no order" in first_failure(cplx, (Contract("c", range=(0, 1)),)).shown


def test_dtype_requires_grad_and_non_tensor_values():
    rows = trace((1, tensor("ids", dtype="torch.float32")), (2, tensor("logits", requires_grad=False)),
                 (3, TensorState("loss", kind="value", type="float", value=2.0, min=2.0, max=2.0, nan=0, inf=0)))
    contracts = (Contract("ids", dtype="torch.int64"), Contract("logits", requires_grad=True),
                 Contract("loss", shape=()))
    found = failures(rows, contracts)
    assert [f.text for f in found] == [
        "line 1: ids dtype float32, contract dtype int64",
        "line 2: logits requires_grad false, contract requires_grad true",
        "line 3: loss is a float, not a tensor, contract shape []",
    ]


def test_holds_results_and_the_codes_exception_are_failures_in_row_order():
    rows = Trace(rows=[TraceRow(line=1, holds=(("w", "true"),)), TraceRow(line=4, holds=(("w", "false"),))])
    c = (Contract("w", holds="w.grad is not None"),)
    assert first_failure(rows, c).text == "line 4: `w.grad is not None` is false"
    raised = ErrorInfo("code", "RuntimeError", "shapes cannot be multiplied", 2)
    assert first_failure(Trace(rows=[TraceRow(line=1, names=(tensor("x"),))]), c, raised).text == \
        "line 2: raised RuntimeError: shapes cannot be multiplied"


SPEC = FirstDivergence(contracts=(), answer_line=4, stages=(CodeStage("normalise", 3, 4), CodeStage("model", 5, 9)))


@pytest.mark.parametrize("text, value", [
    ("4", ("line", 4)), ("line 4", ("line", 4)), ("L4", ("line", 4)), ("  Line   4 ", ("line", 4)), ("l 4", ("line", 4)),
    ("#4", ("line", 4)), ("normalise", ("stage", "normalise")), ("Normalise", ("stage", "normalise")),
    ("stage model", ("stage", "model")), ("b", ("stage", "model")),
])
def test_answer_forms(text, value):
    assert parse_line(text, ("normalise", "model")) == value


@pytest.mark.parametrize("text", ["", "four", "line four", "c", "4.5", "normal"])
def test_garbage_gets_a_clear_message(text):
    with pytest.raises(LineAnswerError) as caught:
        parse_line(text, ("normalise", "model"))
    assert "line N" in str(caught.value) and "normalise, model" in str(caught.value)


def test_read_answer_reads_the_line_kind_and_says_what_to_type():
    class Ask:
        kind, options, key = "line", ("normalise",), "first-divergence"

    assert read_answer(Ask(), "L7").value == ("line", 7)
    assert "give a line of the code" in read_answer(Ask(), "somewhere").problem


def test_a_stage_is_right_when_the_failing_line_is_in_it_and_feedback_names_both_lines():
    failure = first_failure(trace((4, tensor("img", min=0.0, max=255.0, nan=0, inf=0))), (Contract("img", range=(0, 1)),))
    assert is_right(("line", 4), failure, SPEC) and is_right(("stage", "normalise"), failure, SPEC)
    assert not is_right(("line", 3), failure, SPEC) and not is_right(("stage", "model"), failure, SPEC)
    text = divergence_text(("line", 9), failure, SPEC)
    assert text == ("You chose line 9, but a contract already fails earlier, on line 4 (stage normalise): "
                    "img max 255.0, contract range [0, 1]")
    assert "the first failure is later, on line 4" in divergence_text(("line", 2), failure, SPEC)


def test_a_wrong_answers_misconception_matches_any_spelling():
    class Wrong:
        answer, misconception = "9", "the NaN appears where it is first seen"

    assert misconception(("line", 9), [Wrong()], ()) == "the NaN appears where it is first seen"
    assert misconception(("line", 8), [Wrong()], ()) == ""


def test_the_trace_table_flags_what_changed_since_the_same_names_previous_row():
    from tutor.tutoring.trace_view import TraceReport, trace_blocks, trace_lines

    rows = trace((1, tensor("x", (2, 3), stride=(3, 1), version=0, min=0.0, max=1.0, nan=0, inf=0)),
                 (2, tensor("y", (3, 2), stride=(1, 3), version=0, min=0.0, max=1.0, nan=0, inf=0)),
                 (3, tensor("x", (2, 3), stride=(3, 1), version=1, min=0.0, max=9.0, nan=0, inf=0)))
    first = first_failure(rows, (Contract("x", range=(0, 1)),))
    table = trace_blocks(TraceReport(tuple(rows.rows), first=first))
    changed = [[c.label for c in e.cells if c.changed] for e in table.entries]
    assert changed == [[], [], ["version", "max"]]
    assert [e.failing for e in table.entries] == ["", "", "line 3: x max 9.0, contract range [0, 1]"]
    text = "\n".join(trace_lines(TraceReport(tuple(rows.rows), first=first)))
    assert "version 1*" in text and "max 9.0*" in text and "^ first failure: line 3: x max 9.0" in text
    hidden = TraceReport(tuple(rows.rows), first=first).upto(3)
    assert [r.line for r in hidden.rows] == [1, 2]  # a hint never shows the failing row


def test_a_row_inside_a_loop_and_one_after_setup_say_where_they_are():
    from tutor.tutoring.trace_view import TraceReport, trace_blocks, trace_lines

    rows = Trace(rows=[
        TraceRow(line=0, holds=(("w", "false"),)),
        TraceRow(line=4, iteration=(1,), names=(tensor("acc", min=1.0, max=1.0, nan=0, inf=0),)),
        TraceRow(line=4, iteration=(2,), names=(tensor("acc", min=1.0, max=math.inf, nan=0, inf=1),)),
        TraceRow(line=6, scope="step", iteration=(2, 3), names=(tensor("b", min=0.0, max=0.0, nan=0, inf=0),)),
    ], cut=7)
    contracts = (Contract("acc", finite=True),)
    first = first_failure(rows, contracts)
    assert (first.line, first.iteration, first.text) == (4, (2,), "line 4 (iteration 2): acc has 1 Inf, contract finite")
    holds = first_failure(rows, (Contract("w", holds="bool(w)"),))
    assert holds.text == "before the code (after setup): `bool(w)` is false"
    report = TraceReport(tuple(rows.rows), rows.cut, first)
    text = trace_lines(report)
    assert any(t.startswith("  after setup   w: holds false") for t in text)
    assert any(t.startswith("  line 4 (iteration 2) acc:") for t in text)
    assert any(t.startswith("  line 6 in step (iteration 2.3) b:") for t in text)
    assert ("  … the trace reached its cap (400 rows): 7 more statements ran untraced after it (a loop's passes "
            "fill it fast).") in text
    places = [e.short_place for e in trace_blocks(report).entries]
    assert places == ["setup", "4 #1", "4 #2", "6 step #2.3"]  # the TUI panel's narrow column
