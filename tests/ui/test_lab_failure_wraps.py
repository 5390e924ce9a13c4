"""A lab's first failing check: the assertion's message first, wrapped; its source line after (issue 12 item 7)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tutor.app.widgets.result_panel import ResultPanel
from tutor.judge.labs import LabTestResult
from tutor.progress.store import AttemptKind
from tutor.tutoring.presentation import plain_lines, run_blocks
from tutor.tutoring.reports import RunReport
from tutor.tutoring.states import Outcome, RunStatus

SOURCE = ('assert not (bad := mismatch(f, [3.0, -2.0, 0.5])), f"a * a + a: {bad}; each input is checked against '
          'torch.autograd on the same expression"')
MESSAGE = ("a * a + a: input 0 = 3.0: your grad 3, torch.autograd 7 (the two paths from a to the output must both "
           "add into a.grad)")


def report() -> RunReport:
    failing = LabTestResult("gradients", False, MESSAGE, source=SOURCE, status="failed")
    return RunReport("07", "micrograd-engine", AttemptKind.EXERCISE, Outcome.CHECK_FAILS, status=RunStatus.OK,
                     tests=(LabTestResult("source-rules", True), failing))


def test_the_message_comes_before_the_source_line():
    lines = plain_lines(run_blocks(report()))
    assert lines.index(MESSAGE) < next(i for i, text in enumerate(lines) if "mismatch(" in text)


class PanelApp(App):
    def compose(self) -> ComposeResult:
        yield ResultPanel(id="result")


async def test_at_80_columns_nothing_of_the_failure_is_cut():
    app = PanelApp()
    async with app.run_test(size=(80, 30)) as pilot:
        panel = app.query_one(ResultPanel)
        panel.show_report(report())
        await pilot.pause()
        shown = "".join(strip.text for strip in panel.render_lines(panel.region.reset_offset))
        squashed = "".join(shown.replace("│", "").split())
        for text in (MESSAGE, SOURCE):
            assert "".join(text.split()) in squashed, text
        assert squashed.index("".join(MESSAGE.split())) < squashed.index("".join(SOURCE.split()))
