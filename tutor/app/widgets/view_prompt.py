"""Opening a view on any name after the reveal: the prompt, the message that runs it, and the panel it fills.

The learner types ``storage y``, ``graph loss`` or ``module model opt``
(``tutoring.view_blocks.read_view_request`` reads it, the same reader as plain mode's
``:view``); the drill's code, or the code in the editor, runs again in the sandbox with
that view and nothing judged or recorded; the panel draws the presenter's blocks.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tutor.app.messages import Submitted
from tutor.app.widgets.result_panel import rich_blocks
from tutor.course.schema import Drill
from tutor.safe_text import inert
from tutor.tutoring.reports import ViewReport
from tutor.tutoring.service import TutoringService
from tutor.tutoring.view_blocks import VIEW_USAGE, read_view_request, view_report_blocks


class ViewPrompt(ModalScreen[tuple[str, str, str] | None]):
    """Which view of which name: dismissed with ``(kind, name, optimizer)``, or None (Escape)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]
    DEFAULT_CSS = """
    ViewPrompt { align: center middle; }
    ViewPrompt > Vertical { width: 70; max-width: 95%; height: auto; border: thick $accent; background: $panel;
                            padding: 1 2; }
    ViewPrompt #view-problem { color: $error; height: auto; }
    """

    def __init__(self, last: str = "", names: tuple[str, ...] = ()):
        super().__init__()
        self.last = last
        self.names = names  # what the code binds: the learner picks from them instead of scrolling back

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Open a view of what PyTorch recorded. " + VIEW_USAGE.replace("`", "")), id="view-usage")
            if self.names:
                shown = ", ".join(inert(n) for n in self.names[:40]) + (" …" if len(self.names) > 40 else "")
                yield Static(Text.assemble(("Names in this code: ", "bold"), shown), id="view-names")
            yield Input(self.last, placeholder="graph loss", id="view-name")
            yield Static("", id="view-problem")

    def on_mount(self) -> None:
        self.query_one("#view-name", Input).focus()

    @on(Input.Submitted, "#view-name")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        read = read_view_request(event.value)
        if isinstance(read, str):
            self.query_one("#view-problem", Static).update(Text(read.replace("`", "")))
            return
        self.dismiss(read)


# the drill's and the lab's ctrl+l: one meaning, so one row of the key table
VIEW_KEY_HELP = ("after the reveal (in a lab: after a check ran): a view of any name the code binds "
                 "(`storage y`, `graph loss`, `module model opt`)")
VIEW_OPENED = "The view is below the result. ctrl+l opens another. (A view is not an attempt: your progress is as it was.)"


class ViewSubmitted(Submitted):
    """Run the drill's code (or the learner's) with one view of one name; judged and recorded: never."""

    def __init__(self, module_id: str, drill: Drill, code: str | None, kind: str, of: str, optimizer: str = ""):
        super().__init__(module_id, drill, 0.0)
        self.code, self.kind, self.of, self.optimizer = code, kind, of, optimizer

    async def perform(self, service: TutoringService) -> ViewReport:
        return await service.open_view(self.module_id, self.drill, self.code, self.kind, self.of, self.optimizer)


class LabViewSubmitted(ViewSubmitted):
    """A view in a lab: of what the learner's saved file (which the service reads) and the lab's probe bind."""

    async def perform(self, service: TutoringService) -> ViewReport:
        return await service.open_lab_view(self.module_id, self.drill, self.kind, self.of, self.optimizer)


class ViewPanel(Static):
    """The view the learner opened last (the drill's declared views are in the result panel)."""

    DEFAULT_CSS = """
    ViewPanel { height: auto; border: round $secondary; padding: 0 1; display: none; }
    ViewPanel.-shown { display: block; }
    """

    def show_view(self, report: ViewReport) -> None:
        self.update(rich_blocks(view_report_blocks(report)))
        self.add_class("-shown")
