"""A lab's report as the learner reads it: every test, n/m passing, the first failure expanded, the fence beside it."""

from __future__ import annotations

from tutor.judge.labs import LabTestResult
from tutor.progress.store import AttemptKind
from tutor.tutoring.presentation import plain_lines, run_blocks
from tutor.tutoring.reports import RunReport
from tutor.tutoring.states import Outcome, RunStatus

TESTS = (LabTestResult("source-rules", True), LabTestResult("examples", False, "cumsum([1, 2]) = [3, 2], expected [1, 3]",
                                                             status="failed"),
         LabTestResult("random", False, "case 3 of 40 (random cases, seed 7): ...", status="failed"))


def lab_report(**kwargs) -> RunReport:
    return RunReport("1", "cumsum", AttemptKind.EXERCISE, kwargs.pop("outcome", Outcome.CHECK_FAILS),
                     status=RunStatus.OK, tests=kwargs.pop("tests", TESTS), **kwargs)


def test_every_test_is_listed_with_the_first_failure_expanded():
    lines = plain_lines(run_blocks(lab_report()))
    assert lines == ["1/3 tests pass", "✓ source-rules", "✗ examples", "cumsum([1, 2]) = [3, 2], expected [1, 3]",
                     "✗ random"]


def test_a_fence_failure_is_shown_beside_the_authors_message_not_instead_of_it():
    # issue 20: "grad mode changed" used to replace the assertion message that said what was wrong
    report = lab_report(fence=("the grad mode changed from True to False",))
    lines = plain_lines(run_blocks(report))
    assert "cumsum([1, 2]) = [3, 2], expected [1, 3]" in lines
    assert "Fence rule broken: the grad mode changed from True to False" in lines
    single = lab_report(tests=(LabTestResult("check", False, "y must not be modified in place", status="failed"),),
                        fence=("the grad mode changed from True to False",))
    lines = plain_lines(run_blocks(single))
    assert lines[:2] == ["First failing check:", "y must not be modified in place"]
    assert lines[2] == "Fence rule broken: the grad mode changed from True to False"


def test_a_solved_lab_says_so_with_its_tally_and_a_matching_wrong_submission_its_misconception():
    solved = lab_report(outcome=Outcome.SOLVED, tests=tuple(LabTestResult(t.name, True) for t in TESTS))
    assert plain_lines(run_blocks(solved)) == ["All checks pass ✓", "3/3 tests pass"]
    wrong = lab_report(submission_misconception="suffix sums are not prefix sums")
    assert plain_lines(run_blocks(wrong))[-1] == \
        "Your code matches a common wrong submission: suffix sums are not prefix sums"
