"""Prediction beside observation, the first divergence, the check and the output."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from tutor.grading import DrillOutcome, describe_error
from tutor.safe_text import clip, inert

OUTPUT_SHOWN = 4000


class ResultPanel(Static):
    """Shows one run's outcome. Every string from the snippet is rendered as inert text."""

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

    def show_outcome(self, outcome: DrillOutcome, heading: str, graded: bool = True) -> None:
        parts: list = [Text(heading, style="bold")]
        result = outcome.result
        if not result.ok:
            parts.append(Text(result.message, style="bold red"))
        else:
            if outcome.compile_error is not None:  # the cause first: no ask below was evaluated
                parts.append(Text.assemble(("The code did not compile: ", "bold red"),
                                           inert(describe_error(outcome.compile_error))))
            table = Table(expand=True, show_edge=False, pad_edge=False)
            table.add_column("prediction", ratio=3)
            table.add_column("you said" if graded else "your last answer", ratio=2)
            table.add_column("observed", ratio=2)
            table.add_column("", width=2)
            for a in outcome.asks:
                given = a.verdict.given if a.verdict and a.verdict.given else a.answer
                observed = a.verdict.observed if a.verdict and a.verdict.observed else a.problem
                mark = Text("✓", style="green") if a.correct else Text("✗", style="red")
                table.add_row(Text(inert(a.ask.question)), Text(inert(given or "—")),
                              Text(inert(observed or "—")), mark)
            parts.append(table)
            divergence = outcome.first_divergence()
            if divergence and graded and outcome.compile_error is None:
                parts.append(Text.assemble(("First divergence: ", "bold yellow"), inert(divergence)))
            for a in outcome.asks:
                if a.verdict and a.verdict.misconception and graded:
                    parts.append(Text.assemble(("That answer reveals a common misconception: ", "bold magenta"),
                                               inert(a.verdict.misconception)))
            if outcome.error is not None and outcome.compile_error is None:
                parts.append(Text.assemble(("Raised: ", "bold"), inert(describe_error(outcome.error))))
            if outcome.check != "skipped":
                style = "green" if outcome.check == "passed" else "red"
                message = f" — {outcome.check_message}" if outcome.check != "passed" else ""
                parts.append(Text.assemble(("Check: ", "bold"), (outcome.check, style), inert(message)))
            for rule in outcome.fence:
                parts.append(Text(f"Fence rule broken: {inert(rule)}", style="bold red"))
        if result.output.strip():
            parts.append(Text("Output:", style="bold"))
            parts.append(Text(clip(result.output.rstrip("\n"), OUTPUT_SHOWN)))
            if result.output_truncated:
                parts.append(Text(f"… {result.output_truncated:,} more bytes of output were not kept", style="dim"))
        self.update(Group(*parts))
        self.add_class("-shown")

    def clear(self) -> None:
        self.update("")
        self.remove_class("-shown")
