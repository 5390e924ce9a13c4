"""The judge: every spelling people type, never a crash, divergences named."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tutor.course.schema import Ask, WrongAnswer
from tutor.judge import KINDS, AnswerError, expected_form, judge, parse_answer
from tutor.judge.compare import compare, render


def described(value):
    """Describe a plain value the way the sandbox child does."""
    if value is None:
        return {"type": "none"}
    if isinstance(value, bool):
        return {"type": "bool", "value": value}
    if isinstance(value, int):
        return {"type": "int", "value": value}
    if isinstance(value, float):
        v = "nan" if math.isnan(value) else ("inf" if value == math.inf else "-inf" if value == -math.inf else value)
        return {"type": "float", "value": v}
    if isinstance(value, str):
        return {"type": "str", "value": value}
    if isinstance(value, tuple):
        return {"type": "tuple", "items": [described(v) for v in value]}
    if isinstance(value, list):
        return {"type": "list", "items": [described(v) for v in value]}
    raise TypeError(value)


def ask(kind, options=(), tolerance=None, key="e"):
    return Ask(key=key, expr="e", kind=kind, question="q", options=tuple(options), tolerance=tolerance)


@pytest.mark.parametrize("text", ["(2, 3)", "[2,3]", "2x3", "2 × 3", "torch.Size([2, 3])", " ( 2 ,3 ) ", "2X3"])
def test_shape_spellings(text):
    assert parse_answer("shape", text) == (2, 3)


@pytest.mark.parametrize("text", ["()", "[]", "torch.Size([])", "scalar"])
def test_scalar_shape(text):
    assert parse_answer("shape", text) == ()


def test_one_dim_shape_and_render():
    assert parse_answer("shape", "(6,)") == (6,) == parse_answer("shape", "6")
    assert render("shape", (6,)) == "(6,)"


@pytest.mark.parametrize("text,expected", [
    ("float32", "torch.float32"), ("torch.float32", "torch.float32"), ("float", "torch.float32"),
    ("torch.int64", "torch.int64"), ("long", "torch.int64"), ("half", "torch.float16"), ("bf16", "torch.bfloat16"),
    ("Bool", "torch.bool"), ("'torch.uint8'", "torch.uint8"), ("double", "torch.float64"),
])
def test_dtype_spellings(text, expected):
    assert parse_answer("dtype", text) == expected


@pytest.mark.parametrize("text,expected", [("yes", True), ("No", False), ("true", True), ("FALSE", False),
                                           ("y", True), ("0", False)])
def test_bool_spellings(text, expected):
    assert parse_answer("bool", text) is expected


def test_numbers():
    assert parse_answer("int", "3*4") == 12
    assert parse_answer("int", "1_000") == 1000
    assert parse_answer("float", "1/3") == pytest.approx(1 / 3)
    assert math.isnan(parse_answer("float", "nan"))
    assert parse_answer("float", "-inf") == -math.inf
    with pytest.raises(AnswerError):
        parse_answer("int", "2.5")
    with pytest.raises(AnswerError):
        parse_answer("int", "10**10**10")  # refused, not computed


def test_tensor_values():
    assert parse_answer("tensor", "[[1, 2], [3, 4]]") == [[1, 2], [3, 4]]
    assert parse_answer("tensor", "tensor([1., 2.], dtype=torch.float64)") == [1.0, 2.0]
    assert parse_answer("tensor", "tensor(5.)") == 5.0
    with pytest.raises(AnswerError, match="different lengths"):
        parse_answer("tensor", "[[1, 2], [3]]")


def test_errors_and_no_error():
    assert parse_answer("error", "RuntimeError") == "RuntimeError"
    assert parse_answer("error", "torch.OutOfMemoryError") == "OutOfMemoryError"
    assert parse_answer("error", "No error") == "no error"
    assert parse_answer("error", "none") == "no error"


def test_choice_and_names():
    options = ("a view", "a copy")
    assert parse_answer("choice", "b", options) == 1
    assert parse_answer("choice", "B)", options) == 1
    assert parse_answer("choice", "2", options) == 1
    assert parse_answer("choice", "A copy", options) == 1
    with pytest.raises(AnswerError, match="only 2 options"):
        parse_answer("choice", "c", options)
    assert parse_answer("names", "['weight', 'bias']") == {"weight", "bias"}
    assert parse_answer("names", "weight, bias") == {"weight", "bias"}
    assert parse_answer("names", "odict_keys(['0.weight', '0.bias'])") == {"0.weight", "0.bias"}


def test_divergence_names_the_first_difference():
    a = ask("stride")
    v = judge(a, "(3, 1)", described((1, 3)), [WrongAnswer("e", "(3, 1)", "a transpose copies the data")])
    assert not v.correct
    assert v.divergence == "stride, dim 0: you said 3, observed 1"
    assert v.misconception == "a transpose copies the data"
    v = judge(ask("shape"), "(2, 3)", described((2, 3, 1)))
    assert "number of dimensions" in v.divergence
    v = judge(ask("tensor"), "[[1, 2], [3, 5]]", described([[1, 2], [3, 4]]))
    assert v.divergence == "value at [1, 1]: you said 5, observed 4"
    v = judge(ask("names"), "weight", {"type": "list", "items": [described("weight"), described("bias")]})
    assert v.divergence == "names: missing bias"


def test_float_tolerance():
    assert judge(ask("float"), "0.3333", described(1 / 3)).correct
    assert not judge(ask("float"), "0.33", described(1 / 3)).correct
    assert judge(ask("float", tolerance=0.01), "0.33", described(1 / 3)).correct
    assert judge(ask("float"), "nan", described(math.nan)).correct
    assert not judge(ask("float"), "0", described(math.nan)).correct


def test_unreadable_answer_gets_a_hint_not_a_crash():
    v = judge(ask("stride"), "three by one", described((3, 1)))
    assert not v.correct and v.problem.startswith("I can't read")
    assert expected_form("stride") in v.problem
    assert judge(ask("dtype"), "floaty", {"type": "dtype", "value": "torch.float32"}).problem


def test_error_kind_observes_no_error():
    observed = {"type": "none", "no_error": True}
    assert judge(ask("error"), "no error", observed).correct
    v = judge(ask("error"), "RuntimeError", observed)
    assert v.divergence == "exception: you said RuntimeError, observed no error"


EXAMPLES = {
    "shape": described((2, 3)), "stride": described((3, 1)), "dtype": {"type": "dtype", "value": "torch.float32"},
    "device": {"type": "device", "value": "cpu"}, "bool": described(True), "int": described(7),
    "float": described(0.25), "tensor": {"type": "tensor", "values": [[1.0, 2.0]]},
    "error": {"type": "exception", "name": "RuntimeError"}, "choice": described("a view"),
    "names": {"type": "list", "items": [described("weight")]}, "text": described("MulBackward0"),
    "value": described([1, (2, 3), None]),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=60))
def test_every_parser_only_raises_answer_error(kind, text):
    options = ("a view", "a copy")
    try:
        parse_answer(kind, text, options)
    except AnswerError as exc:
        assert str(exc)  # always a message for the learner
    verdict = judge(ask(kind, options), text, EXAMPLES[kind])
    assert verdict.correct or verdict.divergence or verdict.problem


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_rendered_observation_reads_back_as_correct(kind):
    options = ("a view", "a copy")
    verdict = judge(ask(kind, options), "", EXAMPLES[kind])
    assert verdict.observed
    assert judge(ask(kind, options), verdict.observed, EXAMPLES[kind]).correct


@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=6))
def test_dims_round_trip(dims):
    assert parse_answer("shape", render("shape", tuple(dims))) == tuple(dims)
    assert parse_answer("shape", "x".join(map(str, dims)) or "()") == tuple(dims)


nested = st.recursive(st.floats(allow_nan=True, allow_infinity=True, width=32) | st.integers(-1000, 1000),
                      lambda inner: st.lists(inner, min_size=1, max_size=3), max_leaves=12)


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=5))
def test_tensor_values_round_trip(values):
    text = render("tensor", values)
    assert compare("tensor", parse_answer("tensor", text), values) is None
