"""An error ask may accept a documented base class of what was raised (RuntimeError for TorchRuntimeError)."""

from __future__ import annotations

from tutor.course.schema import Ask
from tutor.judge import judge

RAISED = {"type": "exception", "name": "TorchRuntimeError", "message": "no fake impl",
          "bases": ["RuntimeError", "Exception"]}


def test_a_declared_base_that_really_is_one_is_right_and_says_so():
    ask = Ask("compiled", "f()", "error", "What does f() raise?", bases=("RuntimeError",))
    verdict = judge(ask, "RuntimeError", RAISED)
    assert verdict.correct and "TorchRuntimeError" in verdict.note
    assert judge(ask, "TorchRuntimeError", RAISED).correct
    assert not judge(ask, "ValueError", RAISED).correct
    assert not judge(ask, "Exception", RAISED).correct  # a base of it, but not one the author allowed


def test_without_bases_or_when_the_base_is_not_one_the_name_must_match():
    assert not judge(Ask("c", "f()", "error", "?"), "RuntimeError", RAISED).correct
    not_a_base = {**RAISED, "bases": ["Exception"]}
    assert not judge(Ask("c", "f()", "error", "?", bases=("RuntimeError",)), "RuntimeError", not_a_base).correct
