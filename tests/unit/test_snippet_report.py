"""``pytorch-tutor run`` goes through the tutoring service and the one presenter (fake sandbox)."""

from __future__ import annotations

import io

from tests.unit.test_tutoring_service import FakeSandbox
from tutor.sandbox.client import RunResult
from tutor.sandbox.wire import ErrorInfo, Observation
from tutor.commands.snippet_report import run_snippet, run_snippet_file
from tutor.tutoring.presentation import Tone, plain_lines, snippet_blocks
from tutor.tutoring.states import RunStatus

TENSOR = {"type": "tensor", "shape": [3, 2], "dtype": "torch.float32", "stride": [1, 3],
          "shares_storage_with": ["x"]}


def printed(tmp_path, result: RunResult, code: str = "y = x.t()\n") -> tuple[int, list[str], FakeSandbox]:
    snippet = tmp_path / "s.py"
    snippet.write_text(code)
    sandbox = FakeSandbox([result])
    out = io.StringIO()
    rc = run_snippet_file(snippet, 7, out, sandbox)
    return rc, out.getvalue().splitlines(), sandbox


def test_a_clean_run_prints_the_presenters_lines_with_the_verdict_first_and_last(tmp_path):
    result = RunResult("ok", Observation(variables={"y": TENSOR, "n": {"type": "int", "value": 3}}),
                       output="hello\n", seconds=0.25)
    rc, lines, sandbox = printed(tmp_path, result)
    assert rc == 0
    assert sandbox.requests[0].code == "y = x.t()\n" and sandbox.requests[0].timeout == 7
    assert lines[0] == f"== {tmp_path / 's.py'} — ok in 0.25 s"
    assert lines[1:3] == ["-- output", "    hello"]
    assert "y = tensor (3, 2) torch.float32 stride (1, 3) shares storage with x" in lines
    assert "n = 3" in lines and lines[-1] == "-- verdict: ok"
    # what was printed is exactly the presenter's plain rendering of the service's report
    report = run_snippet("y = x.t()\n", 7, str(tmp_path / "s.py"), FakeSandbox([result]))
    assert plain_lines(snippet_blocks(report)) == lines


def test_an_error_and_a_fence_rule_fail_the_run_and_are_named(tmp_path):
    error = ErrorInfo(type="ZeroDivisionError", message="division by zero", line=1, phase="code")
    rc, lines, _ = printed(tmp_path, RunResult("ok", Observation(error=error, fence=["the grad mode changed"])))
    assert rc == 1
    assert "error (ZeroDivisionError)" in lines[0] and "— ok" not in lines[0]
    assert "-- error: ZeroDivisionError: division by zero (line 1 of the code)" in lines
    assert "-- fence rule broken: the grad mode changed" in lines
    assert lines[-1] == "-- verdict: error (ZeroDivisionError)"


def test_a_run_that_did_not_finish_says_why_and_keeps_its_output(tmp_path):
    result = RunResult("timeout", output="spinning\n", output_truncated=2048,
                       message="The snippet ran longer than its 7 s limit and was stopped.")
    rc, lines, _ = printed(tmp_path, result)
    assert rc == 1
    assert "did not finish (timeout)" in lines[0]
    assert "    spinning" in lines and any("2,048 more bytes" in text for text in lines)
    assert lines[-1] == "-- verdict: The snippet ran longer than its 7 s limit and was stopped."


def test_long_output_is_shown_whole_and_the_verdict_is_toned():
    report = run_snippet("print", 5, "s.py", FakeSandbox([RunResult("ok", Observation(), output="x" * 9000)]))
    assert report.status == RunStatus.OK and report.clean
    blocks = snippet_blocks(report)
    assert "x" * 9000 in plain_lines(blocks)[2]
    assert blocks[0].spans[1].tone == Tone.GOOD and blocks[-1].spans[1].tone == Tone.GOOD


def test_an_unreadable_file_is_a_message_not_a_traceback(tmp_path):
    out = io.StringIO()
    assert run_snippet_file(tmp_path / "missing.py", 5, out, FakeSandbox([])) == 2
    assert "cannot read" in out.getvalue()
