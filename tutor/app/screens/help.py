"""The help screen: how a drill works and which keys do what."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# How pytorch-tutor works

Each drill shows a short prompt and a snippet. **Predict** what PyTorch will do — a shape,
a stride, a dtype, a value, an exception — and press **Enter** (or **ctrl+r**) to run the
snippet in a sandbox against the real torch. You see your prediction beside the
**observation**, the **first divergence** between them, and the mechanism behind it.

A drill is verified when your prediction matches. Then **change one thing** (ctrl+e edits
the code) and run it again to watch what moves. Repair drills hide a bug: predict the
symptom, then edit the code until its check passes. What you type in a drill is kept
(answers until they verify, edited code until ctrl+t), across a relaunch and in plain mode.

A module is done when its drills are verified and its self-check questions answered;
finishing it unlocks the modules that need it. Your progress is saved after every
attempt; relaunching resumes where you left off.

## Keys

{keys}

Answers are forgiving about spelling: `(2, 3)`, `2x3` and `torch.Size([2, 3])` are the
same shape; `float32` and `torch.float32` the same dtype; `yes`/`true` the same bool.
An answer the tutor cannot read is never run: you get a hint on the expected form.
"""


def help_text() -> str:
    """The help, its key table generated from the screens' bindings (``tutor.app.keys``)."""
    from tutor.app.keys import markdown_table

    return HELP.replace("{keys}", markdown_table())


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("f1", "dismiss", "Close"),
        Binding("q", "dismiss", "Close"),
    ]
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > VerticalScroll {
        width: 90;
        max-width: 95%;
        height: 85%;
        border: thick $primary;
        background: $panel;
        padding: 0 2;
    }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(help_text())
