"""Answers right in substance are accepted; answers of the wrong form say what they are (issue 12, items 11-13)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_judge import ask, described
from tutor.course.loader import load_course
from tutor.course.schema import Ask, parse_module
from tutor.judge import judge, parse_answer

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
VIEW_ERROR = {"type": "exception", "name": "RuntimeError",
              "message": "view size is not compatible with input tensor's size and stride (at least one dimension "
                         "spans across two contiguous subspaces). Use .reshape(...) instead."}


def test_a_qualified_type_name_is_the_type_name():
    type_name = Ask(key="k", expr="type(x).__name__", kind="text", question="What is type(x).__name__?")
    assert judge(type_name, "torch.Tensor", described("Tensor")).correct
    assert judge(type_name, "<class 'torch.Tensor'>", described("Tensor")).correct
    assert not judge(type_name, "torch.Parameter", described("Tensor")).correct


@pytest.mark.parametrize("text", ["[22 24 26]", "[22. 24. 26.]", "tensor([22., 24., 26.])", "array([22, 24, 26])",
                                  "[44//2, 48//2, 26]"])
def test_numpy_spellings_and_arithmetic_in_a_list(text):
    assert judge(ask("tensor"), text, {"type": "tensor", "values": [22.0, 24.0, 26.0]}).correct


def test_numpy_two_dimensional_printout():
    assert parse_answer("tensor", "[[ 1 -2]\n [ 3  4]]") == [[1, -2], [3, 4]]


def test_arithmetic_inside_a_shape():
    assert judge(ask("shape"), "(44//2, 3)", described((22, 3))).correct
    assert parse_answer("shape", "(2*3, 4)") == (6, 4)
    assert parse_answer("shape", "2*3") == (2, 3)  # without commas, * still separates dimensions


@pytest.mark.parametrize("text", ["tensor(-36.)", "tensor(-36., grad_fn=<MulBackward0>)", "-36"])
def test_a_printed_zero_d_tensor_for_a_float(text):
    assert judge(ask("float"), text, described(-36.0)).correct


def test_an_exception_with_its_message_is_its_class():
    assert judge(ask("error"), "RuntimeError: view size is not compatible…", VIEW_ERROR).correct
    assert judge(ask("error"), "RuntimeError('view size')", VIEW_ERROR).correct
    assert not judge(ask("error"), "ValueError: view size is not compatible", VIEW_ERROR).correct


def test_and_joins_names_it_is_not_one():
    observed = {"type": "list", "items": [described("a"), described("b")]}
    assert judge(ask("names"), "a and b", observed).correct
    assert judge(ask("names"), "a, b and c", observed).divergence == "names: you named c, which is not there"


def test_close_but_not_asked_says_what_was_given():
    type_name = Ask(key="k", expr="type(x.item()).__name__", kind="text", question="Which Python type?")
    verdict = judge(type_name, "torch.float32", described("float"))
    assert not verdict.correct
    assert "you gave a dtype; this asks for the Python type" in verdict.divergence
    assert judge(type_name, "float", described("float")).correct  # float is a Python type first
    shape_for_number = judge(ask("int"), "(2, 3)", described(6))
    assert "you gave several numbers" in shape_for_number.problem.lower()
    assert "you gave a device" in judge(ask("dtype"), "cpu", {"type": "dtype", "value": "torch.float32"}).problem.lower()
    message_for_class = judge(ask("error"), "view size is not compatible", VIEW_ERROR)
    assert "you gave a message; this asks for the exception class" in message_for_class.problem.lower()


def test_the_reveal_shows_the_exception_message_and_the_class_is_judged():
    verdict = judge(ask("error"), "ValueError", VIEW_ERROR)
    assert verdict.observed.startswith("RuntimeError: view size is not compatible with input tensor's size")
    assert verdict.divergence == "exception: you said ValueError, observed RuntimeError"  # the class, not the essay
    assert judge(ask("error"), verdict.observed, VIEW_ERROR).correct  # what is shown reads back as right
    no_error = judge(ask("error"), "no error", {"type": "none", "no_error": True})
    assert no_error.observed == "no error"


# ---------------------------------------------------------------- item 11: text asks declare how they compare


def _one_ask_module(ask_yaml: str):
    from tutor.course.yaml_source import load_yaml

    text = """format_version: 1
module: "01"
drills:
  - id: d
    prompt: p
    code: v = "2.13.0+cpu"
    ask:
ASK_YAML
    explanation: e
    hints: [h]
    wrong_answers:
      - {answer: "2.13.0", misconception: m}
"""
    return parse_module(load_yaml(text.replace("ASK_YAML", ask_yaml), "m.yaml"), "m.yaml")


def test_text_asks_compare_as_declared():
    exact = Ask(key="v", expr="v", kind="text", question="q", match="exact")
    assert judge(exact, "2.13.0+cpu", described("2.13.0+cpu")).correct
    assert not judge(exact, "2.13.0+CPU", described("2.13.0+cpu")).correct
    loose = Ask(key="v", expr="v", kind="text", question="q")
    assert judge(loose, "2.13.0+CPU", described("2.13.0+cpu")).correct
    pattern = Ask(key="v", expr="v", kind="text", question="q", match="regex", pattern=r"2\.13\.\d+(\+\w+)?")
    assert judge(pattern, "2.13.0", described("2.13.0+cpu")).correct
    assert not judge(pattern, "2.12.0", described("2.13.0+cpu")).correct


def test_a_question_saying_exactly_must_declare_an_exact_match():
    module, errors = _one_ask_module('      - {expr: v, kind: text, question: "What is it, exactly?"}')
    assert any("match: exact" in e.message for e in errors), errors
    module, errors = _one_ask_module('      - {expr: v, kind: text, match: exact, question: "What is it, exactly?"}')
    assert not errors and module.drills[0].asks[0].match == "exact"
    _, errors = _one_ask_module('      - {expr: v, kind: text, match: regex, pattern: "(", question: q}')
    assert any("not a regular expression" in e.message for e in errors), errors
    _, errors = _one_ask_module('      - {expr: v, kind: int, match: exact, question: q}')
    assert any("only goes with kind `text`" in e.message for e in errors), errors


def test_the_version_drill_is_judged_exactly():
    course = load_course(LESSONS)
    version = next(a for m in course.modules() for d in m.drills for a in d.asks if a.expr == "version")
    assert version.match == "exact" and "case included" in version.question
    assert judge(version, "2.13.0+cpu", described("2.13.0+cpu")).correct
    assert not judge(version, "2.13.0+CPU", described("2.13.0+cpu")).correct
