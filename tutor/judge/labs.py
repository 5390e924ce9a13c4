"""Labs: what a lab's run request carries, and what its named tests said.

The sandbox side (importing course code from text, running each test, the source
rules) is ``tutor/sandbox/inner/labkit.py``; this is the tutor's side: which code goes to
which half of a judged run, each test's result as the learner should read it, the
hints of the first failing test, and the misconception of a known wrong submission.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from tutor.course.lab_fields import CHECK_TEST
from tutor.course.schema import RULES_TEST, Drill, file_stem
from tutor.sandbox.inner.labkit import fingerprint  # standard library only
from tutor.sandbox.wire import Observation, TestSpec

MAIN_FILE = "your file"  # how the learner's main file is named in a rule's message


def request_fields(drill: Drill, code: str, files: Mapping[str, str] | None = None) -> dict:
    """The lab parts of a run request (``RunRequest`` keyword arguments).

    ``files`` holds the learner's other files and earlier stages by module name; a
    file that is missing counts as its starter, a stage that is missing as that
    stage's reference ("use the reference for this stage").
    """
    helpers = tuple(drill.helpers)
    if not drill.is_exercise:  # a repair's check runs in the judge's process, whose setup imports them too
        return {"modules": helpers, "judge_modules": helpers} if helpers else {}
    files = dict(files or {})
    learner_files = tuple((f.name, files.get(f.name, f.starter)) for f in drill.files)
    learner_stages = tuple((s.name, files.get(s.name, s.reference)) for s in drill.stages)
    return {
        "modules": helpers + learner_files + learner_stages,
        "judge_modules": helpers + tuple((f.name, f.solution) for f in drill.files)
        + tuple((s.name, s.reference) for s in drill.stages),
        "tests": tuple(TestSpec(t.name, t.check, t.probe) for t in drill.tests),
        "rules": drill.rules.to_wire() if drill.rules is not None else None,
        "fixtures": drill.fixtures,
        "sources": ((MAIN_FILE, code),) + tuple((f"{name}.py", text) for name, text in learner_files),
    }


def reference_files(drill: Drill) -> dict[str, str]:
    """The reference of every other file of a lab (its stages default to their references)."""
    return {f.name: f.solution for f in drill.files}


@dataclass(frozen=True)
class LabTestResult:
    name: str
    passed: bool
    message: str = ""
    source: str = ""  # the failing line of the test, only when the author shows tests (or gave no message)
    status: str = "passed"  # passed | failed | error

    @property
    def is_rules(self) -> bool:
        return self.name == RULES_TEST


def test_results(drill: Drill, observation: Observation | None) -> list[LabTestResult]:
    """Each named test's result, in order (a lab graded by one `check:` reports it as the test "check")."""
    if observation is None:
        return []
    out = [_result(drill, t.name, t.status, t.message, t.line) for t in observation.tests]
    if drill.check.strip() and observation.check != "skipped":
        out.append(_check_result(drill, observation))
    return out


def _check_result(drill: Drill, observation: Observation) -> LabTestResult:
    message = observation.check_message
    line = observation.check_line if observation.check == "failed" else None
    return _result(drill, CHECK_TEST, observation.check, message, line, drill.check)


def _result(drill: Drill, name: str, status: str, message: str, line: int | None,
            check: str | None = None) -> LabTestResult:
    if status == "passed":
        return LabTestResult(name, True)
    if check is None:
        check = next((t.check for t in drill.tests if t.name == name), "")
    source = ""
    lines = check.splitlines()
    # a grader's internals stay hidden unless the author shows the tests; a bare `assert`
    # without a message would say nothing at all, so its line is the message then
    if line and 0 < line <= len(lines) and (drill.show_tests or not message.strip()):
        source = lines[line - 1].strip()
    if not message.strip() and not source:
        message = "a check did not hold"
    return LabTestResult(name, False, message, source, status)


def all_passed(results: list[LabTestResult]) -> bool:
    return bool(results) and all(r.passed for r in results)


def summary(results: list[LabTestResult]) -> str:
    """``3/5 tests pass`` (the source rules count as a test)."""
    passed = sum(r.passed for r in results)
    return f"{passed}/{len(results)} test{'s' if len(results) != 1 else ''} pass"


def failing_hints(drill: Drill, results: list[LabTestResult]) -> tuple[str, ...]:
    """Hints of the first failing test (when it has its own), then the lab's own tiers."""
    first = next((r for r in results if not r.passed), None)
    own = next((t.hints for t in drill.tests if first is not None and t.name == first.name), ())
    return tuple(own) + tuple(drill.hints)


def misconception(drill: Drill, observation: Observation | None) -> str:
    """The misconception of a listed wrong submission the learner's file matches (layout and comments aside)."""
    if observation is None or not observation.fingerprint:
        return ""
    for wrong in drill.wrong_submissions:
        if not wrong.files and fingerprint(wrong.code) == observation.fingerprint:
            return wrong.misconception
    return ""


def repair_misconception(drill: Drill, code: str) -> str:
    """The misconception of a declared wrong fix the learner's repair matches (layout and comments aside).

    A repair's code is the learner's text on this side, so it is read here, as a lab's file is read
    in the judge."""
    mine = fingerprint(code)
    return next((w.misconception for w in drill.wrong_submissions if mine and fingerprint(w.code) == mine), "")


def workspace_name(drill: Drill, name: str) -> str:
    """The file name of a multi-file lab's other file inside the lab's workspace folder."""
    return f"{file_stem(drill.id)}/{name}.py"
