"""A run's report, drawn with Rich: the presenter's blocks in colour (see ``tutor.tutoring.presentation``)."""

from __future__ import annotations

from rich.console import Group
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from tutor.tutoring.presentation import AskTable, Block, Line, Tone, prose, run_blocks
from tutor.tutoring.reports import RunReport

STYLES = {
    Tone.PLAIN: "", Tone.STRONG: "bold", Tone.GOOD: "green", Tone.BAD: "bold red",
    Tone.DIVERGENCE: "bold yellow", Tone.MISCONCEPTION: "bold magenta", Tone.DIM: "dim", Tone.OUTPUT: "",
    Tone.INLINE_CODE: "bold cyan",
}


def rich_line(block: Line) -> Text | Syntax:
    if block.spans and block.spans[0].tone == Tone.CODE:
        # wrapped, never cut at the terminal's width (an assertion's line is often long)
        return Syntax(block.text, "python", theme="ansi_dark", background_color="default", word_wrap=True)
    # Text.assemble, never markup: the spans are lesson and snippet text
    return Text.assemble(*((span.text, STYLES[span.tone]) for span in block.spans))


def prose_text(text: str, style: str = "") -> Text:
    """Lesson prose (already inert) with `code` marked, not printed with its backticks."""
    return Text.assemble(*((part, f"{style} {STYLES[tone]}".strip() if tone == Tone.INLINE_CODE else style)
                           for part, tone in prose(text)))


def rich_table(block: AskTable) -> Table:
    table = Table(expand=True, show_edge=False, pad_edge=False)
    table.add_column("prediction", ratio=3)
    table.add_column("you said" if block.graded else "your last answer", ratio=2)
    table.add_column("observed", ratio=2)
    table.add_column("", width=2)
    for question, said, observed, correct in block.rows:
        mark = Text("✓", style="green") if correct else Text("✗", style="red") if correct is False else Text("")
        table.add_row(prose_text(question), Text(said or "—"), Text(observed or "—"), mark)
    return table


def rich_blocks(blocks: list[Block]) -> Group:
    return Group(*(rich_table(b) if isinstance(b, AskTable) else rich_line(b) for b in blocks))


class ResultPanel(Static):
    """Shows one run's report."""

    DEFAULT_CSS = """
    ResultPanel {
        height: auto;
        border: round $accent;
        padding: 0 1;
        display: none;
    }
    ResultPanel.-shown {
        display: block;
    }
    """

    def show_report(self, report: RunReport, heading: str = "") -> None:
        self.show_blocks(run_blocks(report, heading))

    def show_blocks(self, blocks: list[Block]) -> None:
        self.update(rich_blocks(blocks))
        self.add_class("-shown")

    def clear(self) -> None:
        self.update("")
        self.remove_class("-shown")
