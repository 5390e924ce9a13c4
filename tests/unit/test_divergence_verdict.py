"""A first-divergence repair is decided by the judge's check alone, never by the rows its code's process wrote.

The trace of a repair is recorded in the learner's process, so the learner's code can write
any rows it likes; the judge's fresh process checks the contracts on the exported final
values. Through the real sandbox, with code that really forges rows:
``tests/sandbox/test_sandbox_trace.py::test_rows_forged_by_the_learners_code_change_no_verdict``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.course.loader import load_course
from tutor.grading import grade
from tutor.sandbox.results import RunResult
from tutor.sandbox.wire import Observation
from tutor.sandbox.wire.trace import TensorState, Trace, TraceRow

COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "divergence_course"


@pytest.fixture(scope="module")
def drill():
    return load_course(COURSE).slot("01").module.drill("pixel-scale")


def run_with(rows: list[TraceRow], check: str, message: str = "") -> RunResult:
    return RunResult("ok", Observation(check=check, check_message=message, trace=Trace(rows=rows)))


FAILING_ROW = TraceRow(1, names=(TensorState("img", shape=(2, 4, 4, 3), dtype="torch.float32", min=0.0, max=255.0,
                                             mean=120.0, nan=0, inf=0),))
CLEAN_ROW = TraceRow(1, names=(TensorState("img", shape=(2, 4, 4, 3), dtype="torch.float32", min=0.0, max=1.0,
                                           mean=0.5, nan=0, inf=0),))


def test_rows_that_say_a_contract_fails_do_not_fail_a_repair_the_judge_passed(drill):
    outcome = grade(drill, {}, run_with([FAILING_ROW], "passed"))
    assert outcome.contract_failures and outcome.contract_failures[0].line == 1  # shown: the trace marks it
    assert outcome.check.value == "passed" and outcome.code_passes


def test_clean_rows_do_not_pass_a_repair_the_judge_failed_and_its_message_is_the_judges(drill):
    outcome = grade(drill, {}, run_with([CLEAN_ROW], "failed", "img spans 0 to 235, contract range [0, 1]"))
    assert not outcome.contract_failures
    assert not outcome.code_passes
    assert outcome.check_message == "img spans 0 to 235, contract range [0, 1]"
