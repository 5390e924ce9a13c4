"""Symptoms-first repairs (``symptoms_first: true``): the schema, the core's decisions, and the author's check.

The core decides whether the source is hidden, what may be shown before the answers (the output and the
exception, never an ask's value) and judges the diagnosis on the very run the learner read; a fake sandbox
counts the runs. The app and plain mode are driven through the same drill in ``tests/ui/test_symptoms_first.py``
and ``tests/unit/test_plain_symptoms.py``.
"""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.unit.test_tutoring_service import FakeSandbox
from tutor.course.loader import load_course
from tutor.grading import grade_read, read_answers
from tutor.interview.plan import QuestionKind, candidates as interview_candidates
from tutor.placement import candidates as placement_candidates
from tutor.progress.review import Rating
from tutor.progress.store import ProfileStore
from tutor.safe_text import inert
from tutor.sandbox.client import RunResult
from tutor.sandbox.wire import AskResult, ErrorInfo, Observation
from tutor.session import Session
from tutor.tutoring.presentation import OUTPUT_SHOWN, plain_lines
from tutor.tutoring.service import TutoringService
from tutor.tutoring.states import Outcome, RunStatus
from tutor.tutoring.symptoms import SOURCE_HIDDEN, giveaway_problems, symptoms_blocks
from tutor.commands.validation import validate

COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "symptoms_course"
CAUSE = "earlier steps' gradients stay in .grad"
LOG = "step 0: loss 18.667\nstep 1: loss 5.310\nstep 2: loss 0.620\nstep 3: loss 12.330\n"


def choice(text: str) -> dict:
    return {"type": "str", "value": text}


def ran(output: str = LOG, cause: str = CAUSE, rises: bool = True, error: ErrorInfo | None = None) -> RunResult:
    """The drill's run as the sandbox reports it: the asks' values (the answers), the output, the check."""
    asks = {"cause": AskResult(choice(cause)), "rises": AskResult({"type": "bool", "value": rises})}
    return RunResult("ok", Observation(error=error, asks=asks, check="failed",
                                       check_message="each step's .grad holds more than that step's gradient"),
                     output=output)


@pytest.fixture
def course():
    loaded = load_course(COURSE)
    assert not loaded.all_errors(), loaded.all_errors()
    return loaded


@pytest.fixture
def store(tmp_path):
    opened = ProfileStore.open(tmp_path / "p.sqlite")
    yield opened
    opened.close()


def module_of(course):
    return course.modules()[0]


def drill_of(course):
    return module_of(course).drill("settles-or-not")


def service_with(course, store, *results: RunResult, clock=None) -> tuple[TutoringService, FakeSandbox]:
    sandbox = FakeSandbox(list(results))
    session = Session(course, store, clock=clock) if clock else Session(course, store)
    return TutoringService(session, sandbox), sandbox


# ---------------------------------------------------------------- the schema


def write_module(tmp_path: Path, body: str, version: int = 2) -> Path:
    (tmp_path / "course.yaml").write_text(
        'format_version: 1\nid: t\ntitle: T\nparts: [{id: p, title: P}]\n'
        'modules:\n  - {id: "01", part: p, requires: [], title: "One", file: 01_one.yaml}\n')
    (tmp_path / "01_one.yaml").write_text(f'format_version: {version}\nmodule: "01"\ndrills:\n{body}')
    return tmp_path


PREDICTION = """\
  - id: plain
    symptoms_first: true
    prompt: What is it?
    code: x = 1
    ask: [{expr: x, kind: int}]
    explanation: It is one.
    hints: [Look.]
    wrong_answers: [{answer: "2", misconception: off by one}]
"""
REPAIR = """\
  - id: fix-it
    {kind}symptoms_first: {flag}
    prompt: Diagnose the run.
    code: |
      x = 1
      print("x is set")
    ask: [{{expr: x, kind: int}}]
    check: assert x == 2, "x should be two"
    solution: x = 2
    explanation: It should be two.
    hints: [Look.]
    wrong_answers: [{{answer: "2", misconception: the code is right}}]
"""


def test_the_key_reads_as_a_flag_of_the_drill(course):
    assert drill_of(course).symptoms_first is True
    assert drill_of(course).is_repair


def test_validate_refuses_it_on_a_drill_that_is_no_repair_at_its_line(tmp_path):
    out = io.StringIO()
    assert validate([write_module(tmp_path, PREDICTION)], out) == 1
    assert "01_one.yaml:5:" in out.getvalue()
    assert "`symptoms_first` goes with kind: repair, not prediction" in out.getvalue()


def test_it_needs_format_2_and_a_boolean(tmp_path):
    out = io.StringIO()
    assert validate([write_module(tmp_path, REPAIR.format(kind="", flag="true"), version=1)], out) == 1
    assert "`symptoms_first` needs format_version: 2" in out.getvalue()
    out = io.StringIO()
    assert validate([write_module(tmp_path, REPAIR.format(kind="kind: repair\n    ", flag="sometimes"))], out) == 1
    assert "symptoms_first: expected true or false" in out.getvalue()


def test_validate_warns_on_a_diagnosis_with_no_choice_ask(tmp_path):
    out = io.StringIO()
    assert validate([write_module(tmp_path, REPAIR.format(kind="kind: repair\n    ", flag="true"))], out) == 0
    assert "01_one.yaml:4: warning: drill 'fix-it': `symptoms_first` with no choice ask" in out.getvalue()
    out = io.StringIO()
    assert validate([COURSE], out) == 0
    assert "symptoms_first" not in out.getvalue()


def test_interview_and_placement_treat_it_as_a_repair(course):
    module = module_of(course)
    assert [c.kind for c in interview_candidates([module])] == [QuestionKind.REPAIR]
    assert placement_candidates([module]) == {}  # a repair is no placement question


# ---------------------------------------------------------------- the core's decisions


async def test_it_opens_on_the_output_alone_and_judges_the_answers_on_that_run(course, store):
    service, sandbox = service_with(course, store, ran())
    drill = drill_of(course)
    assert service.hides_source("01", drill)
    report = await service.open_symptoms("01", drill)
    assert report.finished and report.output == LOG and not report.error
    shown = "\n".join(plain_lines(symptoms_blocks(report)))
    assert SOURCE_HIDDEN in shown and "step 3: loss 12.330" in shown
    assert CAUSE not in shown and "fresh_grad" not in shown and "grad" not in shown.replace(".grad", "")
    said = service.read_answers(drill, {"cause": "b", "rises": "yes"})
    verdict = await service.submit_prediction("01", drill, said, 5.0)
    assert len(sandbox.requests) == 1  # the diagnosis was judged on the run shown, not on a second one
    assert verdict.outcome == Outcome.SYMPTOM_FOUND and verdict.recorded is not None
    assert [row.observed for row in verdict.rows] == ["b) " + CAUSE, "yes"]
    assert not service.hides_source("01", drill)  # diagnosed: the source now, and on every revisit


async def test_a_wrong_diagnosis_is_compared_and_the_source_follows(course, store):
    service, sandbox = service_with(course, store, ran())
    drill = drill_of(course)
    await service.open_symptoms("01", drill)
    report = await service.submit_prediction("01", drill, service.read_answers(drill, {"cause": "a", "rises": "no"}), 3.0)
    assert report.outcome == Outcome.NOT_YET and len(sandbox.requests) == 1
    assert "a step too large diverges from the start" in report.rows[0].misconception
    assert not service.hides_source("01", drill)  # the observed values are on screen: nothing left to hide


async def test_a_review_repeats_the_diagnosis(course, store):
    now = [datetime.now(timezone.utc) - timedelta(days=30)]
    service, _ = service_with(course, store, ran(), ran(), clock=lambda: now[0])
    drill = drill_of(course)
    await service.open_symptoms("01", drill)
    await service.submit_prediction("01", drill, service.read_answers(drill, {"cause": "b", "rises": "yes"}), 3.0)
    assert not service.hides_source("01", drill)
    service.session.review.review("01", drill.id, "drill", Rating.Again)
    now[0] = datetime.now(timezone.utc)
    assert service.in_review("01", drill) and service.hides_source("01", drill)


async def test_without_a_symptoms_run_the_answers_run_as_any_prediction(course, store):
    service, sandbox = service_with(course, store, ran())
    drill = drill_of(course)
    report = await service.submit_prediction("01", drill, service.read_answers(drill, {"cause": "b", "rises": "yes"}), 1.0)
    assert report.outcome == Outcome.SYMPTOM_FOUND and len(sandbox.requests) == 1


async def test_a_run_that_did_not_finish_says_why_and_the_answers_run_again(course, store):
    service, sandbox = service_with(course, store, RunResult("timeout", message="The run took longer than 10 s."), ran())
    drill = drill_of(course)
    report = await service.open_symptoms("01", drill)
    assert report.status == RunStatus.TIMEOUT
    assert "The run took longer than 10 s." in "\n".join(plain_lines(symptoms_blocks(report)))
    verdict = await service.submit_prediction("01", drill, service.read_answers(drill, {"cause": "b", "rises": "yes"}), 1.0)
    assert verdict.outcome == Outcome.SYMPTOM_FOUND and len(sandbox.requests) == 2


async def test_the_exception_line_is_a_symptom_and_the_output_is_capped_and_inert(course, store):
    error = ErrorInfo("code", "RuntimeError", "Function 'MulBackward0' returned nan values", line=7)
    noisy = "\x1b[2J" + "loss nan\n" * 2000
    service, _ = service_with(course, store, ran(output=noisy, error=error))
    report = await service.open_symptoms("01", drill_of(course))
    shown = "\n".join(plain_lines(symptoms_blocks(report)))
    assert "It raised RuntimeError: Function 'MulBackward0' returned nan values (line 7 of the code)" in shown
    assert "\x1b" not in shown and inert(noisy) != noisy
    assert "more characters not shown" in shown and len(shown) < 2 * OUTPUT_SHOWN < len(noisy)


async def test_another_drill_shows_its_source(course, store, mini_course):
    service = TutoringService(Session(mini_course, store), FakeSandbox([]))
    assert not any(service.hides_source(m.id, d) for m in mini_course.modules() for d in m.drills)


# ---------------------------------------------------------------- the author's check


def outcome_of(drill, result: RunResult):
    return grade_read(drill, read_answers(drill, {}), result)


def test_check_accepts_symptoms_that_leave_the_diagnosis_to_the_learner(course):
    assert giveaway_problems(drill_of(course), outcome_of(drill_of(course), ran())) == []


def test_check_fails_an_answer_printed_in_the_symptoms(course):
    drill = drill_of(course)
    printed = LOG + f"diagnosis: {CAUSE}\nrising: True\n"
    problems = giveaway_problems(drill, outcome_of(drill, ran(output=printed)))
    assert len(problems) == 2
    assert f"ask 'cause': its answer {CAUSE!r} is printed by the run the learner diagnoses" in problems[0]
    assert "ask 'rises': its answer 'True' is printed" in problems[1]
    assert giveaway_problems(drill, outcome_of(drill, ran(output=LOG + "yesterday's run\n"))) == []  # words, not parts


def test_check_fails_a_prompt_that_shows_the_code(course):
    drill = drill_of(course)
    shown = replace(drill, prompt=drill.prompt + "\nIt calls `loss.backward()` each step:\n\n    opt.step()\n")
    problems = giveaway_problems(shown, outcome_of(shown, ran()))
    assert problems == [f"symptoms_first: the prompt holds line {n} of the code ({text!r}): the source is "
                        "hidden until the diagnosis, so describe the program instead"
                        for n, text in ((6, "loss.backward()"), (10, "opt.step()"))]


@pytest.mark.slow  # the real `check`, on the real sandbox: both refusals, on a pack that gives its diagnosis away
def test_check_fails_a_drill_whose_symptoms_or_prompt_give_it_away(tmp_path):
    import shutil

    from tutor.commands.authoring import check

    pack = tmp_path / "pack"
    shutil.copytree(COURSE, pack)
    module = pack / "01_symptoms.yaml"
    text = module.read_text()
    text = text.replace("      Read the log, then diagnose the run.\n",
                        "      Read the log, then diagnose the run. Each step calls `loss.backward()`.\n")
    text = text.replace('''          print(f"step {step}: loss {loss.item():.3f}")
    ask:''', '''          print(f"step {step}: loss {loss.item():.3f}")
      print("last above lowest:", losses[-1] > min(losses))
    ask:''', 1)
    module.write_text(text)
    out = io.StringIO()
    assert check([pack], out, drill_id="settles-or-not") == 1
    said = out.getvalue()
    assert "FAIL 01/settles-or-not" in said
    assert "symptoms_first: ask 'rises': its answer 'True' is printed by the run the learner diagnoses" in said
    assert "symptoms_first: the prompt holds line 6 of the code ('loss.backward()')" in said
    assert "ask 'cause'" not in said
    out = io.StringIO()
    assert check([COURSE], out) == 0, out.getvalue()
