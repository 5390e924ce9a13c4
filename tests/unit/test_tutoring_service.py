"""The tutoring service end to end, with a fake sandbox: what each action reports and what it records."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tutor.course.loader import load_course
from tutor.progress.store import AttemptKind, ProfileStore
from tutor.sandbox.client import RunResult
from tutor.sandbox.wire import AskResult, ErrorInfo, Observation, RunRequest
from tutor.session import Session
from tutor.tutoring.presentation import plain_lines, run_blocks
from tutor.tutoring.reports import NOT_RECORDED_FILE, NOT_RECORDED_OFF, NOT_RECORDED_UNFINISHED, NOT_RECORDED_UNREADABLE
from tutor.tutoring.service import TutoringService
from tutor.tutoring.states import CheckStatus, Outcome, RunStatus
from tutor.workspace import Workspace, ensure_starter


def strides(*dims: int) -> dict:
    return {"type": "tuple", "items": [{"type": "int", "value": d} for d in dims]}


@dataclass
class FakeSandbox:
    """Answers each run with the next prepared result and keeps the requests it was sent."""

    results: list[RunResult]
    requests: list[RunRequest] = field(default_factory=list)

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def run(self, request: RunRequest) -> RunResult:
        self.requests.append(request)
        return self.results.pop(0)


def observed(asks: dict | None = None, check: str = "skipped", message: str = "", line: int | None = None,
             error=None, output: str = "") -> RunResult:
    return RunResult("ok", Observation(error=error, asks={k: AskResult(v) for k, v in (asks or {}).items()},
                                       check=check, check_message=message, check_line=line), output=output)


@pytest.fixture
def session(tmp_path, mini_course):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    yield Session(mini_course, store)
    store.close()


def drill(session, module_id, drill_id):
    return session.module(module_id).drill(drill_id)


async def test_a_wrong_prediction_names_divergence_and_misconception_and_rates_a_card(session):
    d = drill(session, "01", "transpose-strides")
    key = d.asks[0].key
    fake = FakeSandbox([observed({key: strides(1, 3)}, check="passed", output="transposed\n")])
    service = TutoringService(session, fake)
    report = await service.submit_prediction("01", d, service.read_answers(d, {key: "(3, 1)"}), 12.0, 3)
    assert report.outcome == Outcome.NOT_YET and report.status == RunStatus.OK
    assert report.said == {key: "(3, 1)"}
    (row,) = report.rows
    assert (row.said, row.observed, row.correct) == ("(3, 1)", "(1, 3)", False)
    assert report.divergence == "stride, dim 0: you said 3, observed 1"
    assert report.misconceptions == ("a transpose copies the data",)
    assert report.check == CheckStatus.PASSED
    assert report.recorded.kind == AttemptKind.PREDICTION and report.recorded.reviewed  # a missed first try
    (attempt,) = session.store.attempts()
    assert (attempt.kind, attempt.correct, attempt.confidence) == ("prediction", False, 3)
    assert session.review.card("01", d.id) is not None
    assert not fake.requests[0].judged  # a prediction's check is not a verdict on the learner's code


async def test_a_right_prediction_verifies_and_reports_what_it_unlocked(session):
    module = session.module("01")
    service = TutoringService(session, None)
    for check in module.self_checks:  # everything but the first drill done already
        await service.answer_self_check("01", check, "b" if check.is_choice else "it swaps strides", 5.0)
    second = module.drill("sum-dtype")
    dtype, total = (a.key for a in second.asks)
    service.sandbox = FakeSandbox([observed({dtype: {"type": "dtype", "value": "torch.int64"},
                                             total: {"type": "int", "value": 6}}),
                                   observed({module.drills[0].asks[0].key: strides(1, 3)}, check="passed")])
    await service.submit_prediction("01", second, service.read_answers(second, {dtype: "int64", total: "6"}), 5.0)
    first = module.drills[0]
    report = await service.submit_prediction("01", first, service.read_answers(first, {first.asks[0].key: "1x3"}),
                                             5.0)
    assert report.outcome == Outcome.VERIFIED and report.drill_done
    assert not report.recorded.reviewed  # right on the first try: no card
    assert [(m.id, m.title) for m in report.unlocked] == [("02", "Second steps")]


async def test_an_unreadable_answer_runs_nothing_and_records_nothing(session):
    d = drill(session, "01", "transpose-strides")
    fake = FakeSandbox([])
    service = TutoringService(session, fake)
    said = service.read_answers(d, {d.asks[0].key: "three by one"})
    report = await service.submit_prediction("01", d, said, 1.0)
    assert report.outcome == Outcome.UNREADABLE and report.status is None
    assert "three by one" in report.problems[d.asks[0].key]
    assert report.not_recorded == NOT_RECORDED_UNREADABLE
    assert fake.requests == [] and session.store.attempts() == []


async def test_a_run_that_does_not_finish_records_nothing_for_any_action(session):
    d = drill(session, "01", "transpose-strides")
    timeout = RunResult("timeout", message="The snippet ran longer than its 2 s limit.")
    service = TutoringService(session, FakeSandbox([timeout, timeout]))
    report = await service.submit_prediction("01", d, service.read_answers(d, {d.asks[0].key: "(1, 3)"}), 1.0)
    assert report.outcome == Outcome.NOT_FINISHED and report.not_recorded == NOT_RECORDED_UNFINISHED
    assert report.message == timeout.message and report.recorded is None
    report = await service.run_experiment("01", d, "y = x\n", 1.0)
    assert report.outcome == Outcome.NOT_FINISHED and report.recorded is None
    assert session.store.attempts() == []
    assert plain_lines(run_blocks(report))[0] == timeout.message


async def test_a_repair_is_judged_by_its_check_in_a_process_of_its_own(session):
    d = drill(session, "02", "keepdim-bug")
    fake = FakeSandbox([observed(check="failed", message="b.dim() was 1", line=1), observed(check="passed")])
    service = TutoringService(session, fake)
    report = await service.submit_repair("02", d, "b = a.mean(dim=0, keepdim=True)\n", 3.0)
    assert report.outcome == Outcome.CHECK_FAILS and report.recorded.correct is False
    assert (report.check, report.check_message) == (CheckStatus.FAILED, "line 1: b.dim() was 1")
    assert "Check of the code: failed — line 1: b.dim() was 1" in plain_lines(run_blocks(report))
    assert fake.requests[0].judged and fake.requests[0].code == "b = a.mean(dim=0, keepdim=True)\n"
    report = await service.submit_repair("02", d, "b = a.mean()\n", 3.0)
    # the repair passes, but the symptom is still to predict before the drill is done
    assert report.outcome == Outcome.REPAIRED_PREDICT_NEXT and not report.drill_done
    assert [(a.kind, a.correct) for a in session.store.attempts()] == [("repair", False), ("repair", True)]


async def test_a_lab_reports_per_test_results_and_what_the_code_raised(session):
    d = drill(session, "04", "write-relu")
    raised = ErrorInfo("probe", "NotImplementedError", "replace this line", 2)
    fake = FakeSandbox([observed(error=raised, check="error", message="the probe raised"),
                        observed(check="failed", message="return a new tensor; do not modify x", line=2),
                        observed(check="passed")])
    service = TutoringService(session, fake)
    report = await service.check_lab("04", d, d.starter, 1.0)
    assert report.outcome == Outcome.CHECK_FAILS
    assert report.error == "NotImplementedError: replace this line (line 2 of the probe)"
    assert plain_lines(run_blocks(report))[0].startswith("Your code raised NotImplementedError")
    report = await service.check_lab("04", d, "def relu(x):\n    return x.clamp_(min=0)\n", 1.0)
    failure = report.first_failure
    assert (failure.name, failure.message) == ("check", "return a new tensor; do not modify x")
    assert failure.source == ""  # the grader's lines stay hidden unless the lab shows its tests
    assert plain_lines(run_blocks(report))[:2] == ["First failing check:", "return a new tensor; do not modify x"]
    assert report.hints == d.hints
    report = await service.check_lab("04", d, d.solution, 1.0)
    assert report.outcome == Outcome.SOLVED and report.tests[0].passed and report.drill_done
    assert plain_lines(run_blocks(report)) == ["All checks pass ✓"]
    assert [a.kind for a in session.store.attempts()] == ["exercise"] * 3


async def test_an_experiment_shows_the_last_answers_against_the_new_observation(session):
    d = drill(session, "01", "transpose-strides")
    key = d.asks[0].key
    service = TutoringService(session, FakeSandbox([observed({key: strides(2, 1)})]))
    said = service.read_answers(d, {key: "(1, 3)"})
    report = await service.run_experiment("01", d, "y = x.t().contiguous()\n", 4.0, said)
    assert report.outcome == Outcome.OBSERVED and not report.graded
    assert report.rows[0].observed == "(2, 1)" and report.misconceptions == ()
    assert "your last answer (1, 3); observed (2, 1)" in plain_lines(run_blocks(report))[0]
    assert session.store.attempts()[0].kind == "experiment"


async def test_recording_off_runs_the_same_way_and_writes_nothing(mini_course):
    d = mini_course.slot("01").module.drill("transpose-strides")
    key = d.asks[0].key
    service = TutoringService(None, FakeSandbox([observed({key: strides(1, 3)}, check="passed")]))
    report = await service.submit_prediction("01", d, service.read_answers(d, {key: "(1, 3)"}), 1.0)
    assert report.outcome == Outcome.VERIFIED and report.recorded is None
    assert report.not_recorded == NOT_RECORDED_OFF


async def test_self_check_answers_are_judged_once_and_free_text_asks_for_a_rating(session):
    module = session.module("01")
    free, choice = module.self_checks
    service = TutoringService(session, None)
    report = await service.answer_self_check("01", choice, "z", 2.0)
    assert "only 2 options" in report.problem and report.recorded is None
    report = await service.answer_self_check("01", choice, "a", 2.0)
    assert report.correct is False and report.right_answer == "b) x.clone()" and report.recorded.reviewed
    report = await service.answer_self_check("01", free, "", 2.0)
    assert report.problem and session.store.attempts()[-1].item == choice.id  # nothing recorded
    report = await service.answer_self_check("01", free, "strides swap", 2.0)
    assert report.needs_rating and report.correct is None and not report.recorded.reviewed
    assert service.rate_self_check("01", free, 4)
    assert session.review.card("01", free.id) is not None
    with pytest.raises(ValueError):
        service.rate_self_check("01", free, 5)


# each placement drill of the mini course's 01, every ask: (observed, right answer, wrong answer)
OBSERVED_IN_01 = {"transpose-strides": [(strides(1, 3), "(1, 3)", "(3, 1)")],
                  "sum-dtype": [({"type": "dtype", "value": "torch.int64"}, "int64", "float32"),
                                ({"type": "int", "value": 6}, "6", "6")]}


async def _take(service, session, questions, right: bool):
    """Answer each question (right or wrong); drills run in the fake sandbox, self-checks need none."""
    results = []
    for q in questions:
        if q.runs_code:
            asks = OBSERVED_IN_01[q.drill.id]
            service.sandbox.results.append(observed({a.key: value for a, (value, _, _) in zip(q.asks, asks)}))
            results.append(await service.answer_placement(
                q, {a.key: good if right else bad for a, (_, good, bad) in zip(q.asks, asks)}))
        else:
            results.append(await service.answer_placement(q, "b" if right else "a"))
    return results


async def test_placement_passes_only_above_the_bar_and_marks_what_it_covered(session):
    service = TutoringService(session, FakeSandbox([]))
    questions = session.placement_set("02")
    assert {q.runs_code for q in questions} == {True, False}  # drills and self-checks
    report = await service.take_placement("02", await _take(service, session, questions, right=False))
    assert not report.passed and report.tested_out == () and report.unlocked == ()
    wrong_drill = next(r for r in report.rows if "y.stride()" in r.question or "dtype" in r.question)
    assert not wrong_drill.correct and wrong_drill.right_answer in ("(1, 3)", "torch.int64; 6") and wrong_drill.why
    wrong_choice = next(r for r in report.rows if r.question.startswith("Which of these copies"))
    assert wrong_choice.right_answer == "b) x.clone()" and "you chose a)" in wrong_choice.why
    questions = session.placement_set("02")
    report = await service.take_placement("02", await _take(service, session, questions, right=True))
    assert report.passed and report.tested_out == ("01",)
    assert [m.id for m in report.unlocked] == ["02"]
    assert [(a.kind, a.correct) for a in session.store.attempts()] == [("placement", False), ("placement", True)]
    assert session.state("01").status.value == "tested out" and "01" not in session.progress.done


async def test_a_syntax_error_is_said_first_and_nothing_after_it_is_blamed(session):
    d = drill(session, "01", "transpose-strides")
    key = d.asks[0].key
    syntax = ErrorInfo("code", "SyntaxError", "invalid syntax (<snippet>, line 1)", 1)
    service = TutoringService(session, FakeSandbox([observed(error=syntax, check="failed", message="x")]))
    report = await service.run_experiment("01", d, "y = x.t(\n", 1.0, service.read_answers(d, {key: "(1, 3)"}))
    lines = plain_lines(run_blocks(report))
    assert lines[0] == "The code did not compile: SyntaxError: invalid syntax (line 1 of the code)"
    assert report.error == "" and report.divergence == "" and report.check == CheckStatus.NOT_RUN
    assert not any(text.startswith("Raised:") for text in lines)


# ---------------------------------------------------------------- a lab's file, read by the service


def lab_service(session, results: list[RunResult]) -> tuple[TutoringService, FakeSandbox, Workspace]:
    space = Workspace("default", session.course.identity)
    fake = FakeSandbox(results)
    return TutoringService(session, fake, space), fake, space


async def test_the_service_reads_the_learners_saved_lab_file_and_checks_it(session):
    d = drill(session, "04", "write-relu")
    service, fake, space = lab_service(session, [observed(check="passed")])
    ensure_starter(space, "04", d).write_text(d.solution, encoding="utf-8")
    report = await service.check_lab_file("04", d, 2.0)
    assert fake.requests[0].code == d.solution  # the file as saved, not the starter
    assert report.outcome == Outcome.SOLVED and report.said == {"code": d.solution} and report.drill_done
    assert [(a.kind, a.answers["code"]) for a in session.store.attempts()] == [("exercise", d.solution)]


@pytest.mark.parametrize("damage, problem", [
    (lambda path: path.unlink(), "is gone; reset the lab to write the starter again"),
    (lambda path: path.write_bytes(b"def relu(x):\n    return x  # caf\xe9\n"), "is not UTF-8 text"),
    (lambda path: (path.unlink(), path.mkdir()), "cannot read"),
], ids=["missing", "not-utf8", "unreadable"])
async def test_a_lab_file_that_cannot_be_read_runs_nothing_records_nothing_and_says_why(session, damage, problem):
    d = drill(session, "04", "write-relu")
    service, fake, space = lab_service(session, [])
    path = ensure_starter(space, "04", d)
    damage(path)
    kept = path.read_bytes() if path.is_file() else None
    report = await service.check_lab_file("04", d, 2.0)
    assert report.outcome == Outcome.FILE_UNREADABLE and report.status is None
    assert str(path) in report.problems["code"] and problem in report.problems["code"]
    assert report.not_recorded == NOT_RECORDED_FILE and report.recorded is None
    assert fake.requests == [] and session.store.attempts() == []
    assert (path.read_bytes() if path.is_file() else None) == kept  # the learner's bytes are left as they were


async def test_a_chained_lab_runs_the_learners_earlier_stage_and_says_whose_code_each_stage_is(tmp_path):
    course = load_course(Path(__file__).resolve().parent.parent / "fixtures" / "puzzle_labs")
    store = ProfileStore.open(tmp_path / "p.sqlite")
    session = Session(course, store)
    eye, bincount = course.slot("1").module.drill("eye"), course.slot("1").module.drill("bincount")
    service, fake, space = lab_service(session, [observed(check="passed")])
    ensure_starter(space, "1", eye).write_text(eye.solution, encoding="utf-8")
    ensure_starter(space, "1", bincount).write_text(bincount.solution, encoding="utf-8")
    report = await service.check_lab_file("1", bincount, 1.0)
    assert dict(fake.requests[0].modules)["puzzle_eye"] == eye.solution  # the learner's stage, not the reference
    assert any(note.startswith("puzzle_eye: your 1_eye.py") for note in report.stages)
    assert any(note.startswith("puzzle_ones: the reference") for note in report.stages)
    store.close()


async def test_a_labs_view_runs_the_saved_file_unjudged_and_an_unreadable_one_says_why(session):
    d = drill(session, "04", "write-relu")
    service, fake, space = lab_service(session, [observed(check="skipped")])
    path = ensure_starter(space, "04", d)
    path.write_text(d.solution, encoding="utf-8")
    report = await service.open_lab_view("04", d, "graph", "out")
    (request,) = fake.requests
    assert request.code == d.solution and not request.judged and request.check == ""
    assert [(v.kind, v.of) for v in request.views] == [("graph", "out")] and report.finished
    assert session.store.attempts() == []  # a view records nothing
    path.write_bytes(b"def relu(x):\n    return x  # caf\xe9\n")
    broken = await service.open_lab_view("04", d, "graph", "out")
    assert not broken.finished and "is not UTF-8 text" in broken.message
    assert len(fake.requests) == 1  # nothing ran


async def test_a_repair_that_raises_leads_with_the_learners_line_and_marks_nothing_it_cannot_compare(session):
    # issue 36 item 3: "— | no | ✗" under "Repaired ✓", and "NameError … (line 1 of the ask)" leading
    # when the learner's own line 2 raised.
    d = drill(session, "02", "keepdim-bug")
    key = d.asks[0].key
    raised = ErrorInfo("code", "AttributeError", "'Tensor' object has no attribute 'it'", 2)
    ask_failed = AskResult(None, error=ErrorInfo("ask", "NameError", "name 'b' is not defined", 1))
    fake = FakeSandbox([RunResult("ok", Observation(error=raised, asks={key: ask_failed}, check="error",
                                                    check_message="NameError: name 'b' is not defined",
                                                    check_line=1))])
    report = await TutoringService(session, fake).submit_repair("02", d, "b = a.mean(dim=0)\nb = b.it\n", 3.0)
    lines = plain_lines(run_blocks(report))
    assert lines[0].startswith("Your code raised AttributeError") and "line 2" in lines[0]
    assert "line 1 of the ask" not in "\n".join(lines) and "not reached: your code raised first" in lines[1]
    assert lines[1].endswith("nothing to compare")  # no last answer: no ✗ beside "—"
    assert lines[2] == "Check of the code: error — not reached: your code raised first (above)"
