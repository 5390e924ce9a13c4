"""Read-only, highlighted code (Pygments through Rich's Syntax)."""

from __future__ import annotations

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.widgets import Static


class CodeView(Static):
    DEFAULT_CSS = """
    CodeView {
        height: auto;
        border: round $panel;
        padding: 0 1;
    }
    """

    def __init__(self, code: str, setup: str = "", **kwargs):
        super().__init__(**kwargs)
        self.show(code, setup)

    def show(self, code: str, setup: str = "") -> None:
        parts = []
        if setup.strip():
            parts.append(Text("# setup", style="dim italic"))
            parts.append(Syntax(setup.rstrip("\n"), "python", theme="ansi_dark", background_color="default",
                                word_wrap=True))
            parts.append(Text("# code", style="dim italic"))
        parts.append(Syntax(code.rstrip("\n"), "python", theme="ansi_dark", background_color="default",
                            word_wrap=True))
        self.update(Group(*parts))
