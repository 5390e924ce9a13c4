"""What a learner reads: counts, lesson prose without raw Markdown, a check never read as praise (issue 12 item 18)."""

from __future__ import annotations

from dataclasses import replace

import argparse

from tutor.progress.store import AttemptKind
from tutor.tutoring.presentation import plain_lines, run_blocks
from tutor.tutoring.reports import AskRow, RunReport
from tutor.tutoring.states import CheckStatus, Outcome, RunStatus
from tutor.wording import count


def test_counts_take_the_number_of_their_noun():
    assert count(1, "answer") == "1 answer" and count(2, "answer") == "2 answers"
    assert count(0, "item") == "0 items" and count(1, "thread") == "1 thread"
    assert count(1200, "attempt") == "1,200 attempts"


def wrong_prediction(**kwargs) -> RunReport:
    row = AskRow("s", "y.stride()", "(3, 1)", "(1, 3)", False, misconception="`x.t()` copies the data")
    return RunReport("01", "d", kwargs.pop("kind", AttemptKind.PREDICTION), Outcome.NOT_YET, status=RunStatus.OK,
                     rows=(row,), check=CheckStatus.PASSED, **kwargs)


def test_a_misconception_is_prose_without_backticks():
    lines = plain_lines(run_blocks(wrong_prediction()))
    assert "Your answer “(3, 1)” reveals a common misconception: x.t() copies the data" in lines
    assert not any("`" in text for text in lines)


def test_a_passing_check_is_not_shown_under_a_prediction_as_if_it_praised_it():
    lines = plain_lines(run_blocks(wrong_prediction()))
    assert not any("passed" in text for text in lines)
    # an experiment's code is the learner's: there the check says what it says about that code
    experiment = plain_lines(run_blocks(wrong_prediction(kind=AttemptKind.EXPERIMENT, graded=False)))
    assert "Check of the code: passed" in experiment


def test_capstone_eval_never_says_beats_by_a_negative(monkeypatch, capsys, tmp_path):
    import capstone.cli as cli
    import capstone.evaluate

    scores = {"nats_per_token": 3.0, "bits_per_byte": 1.5}
    result = {"val_tokens_scored": 10, "val_bytes_scored": 20, "checkpoint_step": 1, "context": 8, "stride": 4,
              "model": scores, "bigram": scores, "unigram": scores, "gap_to_bigram": -1.5002}
    monkeypatch.setattr(capstone.evaluate, "evaluate", lambda *a, **k: result)
    monkeypatch.setattr(cli, "config_from", lambda *a, **k: None)
    cli.cmd_eval(argparse.Namespace(workspace=str(tmp_path), package="reference"))
    out = capsys.readouterr().out
    assert "beats" not in out and "1.5002 nats/token worse than the best bigram" in out


def test_a_drill_is_introduced_by_its_kind():
    from pathlib import Path

    from tutor.course.loader import load_course
    from tutor.wording import drill_label

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    divergence = load_course(fixtures / "divergence_course").slot("01").module.drills[0]
    assert drill_label(divergence) == "first-divergence drill"
    kinds = {d.kind.value: drill_label(d) for m in load_course(fixtures / "mini_course").modules() for d in m.drills}
    assert kinds["repair"] == "repair drill" and kinds["lab"] == "lab" and kinds["prediction"] == "drill"


def test_a_lab_is_called_a_lab_once():
    # issue 36 item 10: "exercise 12/12" in the header beside "Lab: …" in the title
    from tutor.course.loader import load_course
    from tutor.locations import builtin_course_dir
    from tutor.wording import drill_label, shown_title

    micrograd = load_course(builtin_course_dir()).slot("07").module.drill("micrograd-engine")
    assert micrograd.title.startswith("Lab: ")
    assert f"{drill_label(micrograd)} 12/12: {shown_title(micrograd)}" == "lab 12/12: " + micrograd.title[5:]


def test_two_misconceptions_each_name_the_answer_that_showed_it():
    rows = (AskRow("s", "y.stride()", "(3, 1)", "(1, 3)", False, misconception="a transpose copies the data"),
            AskRow("c", "Is `y` contiguous?", "yes", "no", False, misconception="every view is contiguous"),
            AskRow("v", "Is `y` a view?", "no", "yes", False, misconception="a transpose copies the data"))
    report = RunReport("01", "d", AttemptKind.PREDICTION, Outcome.NOT_YET, status=RunStatus.OK, rows=rows)
    said = [text for text in plain_lines(run_blocks(report)) if "misconception" in text]
    assert said == ["Your answer “(3, 1)” reveals a common misconception: a transpose copies the data",
                    "Your answer “yes” reveals a common misconception: every view is contiguous",
                    "Your answer “no” reveals a common misconception: a transpose copies the data"]
    alike = RunReport("01", "d", AttemptKind.PREDICTION, Outcome.NOT_YET, status=RunStatus.OK,
                      rows=(rows[1], replace(rows[2], said="yes")))
    said = [text for text in plain_lines(run_blocks(alike)) if "misconception" in text]
    assert said == ["Your answer “yes” (Is y contiguous?) reveals a common misconception: every view is contiguous",
                    "Your answer “yes” (Is y a view?) reveals a common misconception: a transpose copies the data"]
