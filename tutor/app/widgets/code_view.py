"""Read-only, highlighted code (Pygments through Rich's Syntax): a drill's setup and code.

While the learner edits, the editor takes the code's place and this shows only the setup
(one copy of the code on screen, never a read-only panel beside the editor).
"""

from __future__ import annotations

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from tutor.safe_text import inert


def _syntax(code: str) -> Syntax:
    # A pack's code is shown, not trusted: an escape in it (OSC 52, ESC[2J, RLO) must not reach the terminal.
    return Syntax(inert(code).rstrip("\n"), "python", theme="ansi_dark", background_color="default", word_wrap=True)


class CodeView(Static):
    DEFAULT_CSS = """
    CodeView {
        height: auto;
        border: round $panel;
        padding: 0 1;
    }
    CodeView.-empty { display: none; }
    """

    setup_only = reactive(False, init=False)  # the editor shows the code
    edited = reactive(False, init=False)  # the learner has an edited version (kept; ctrl+e shows it)

    def __init__(self, code: str, setup: str = "", **kwargs):
        super().__init__(**kwargs)
        self.code, self.setup = code, setup
        self._render_code()

    def show(self, code: str, setup: str = "") -> None:
        """Other code in the same view (the placement screen shows one drill after another)."""
        self.code, self.setup = code, setup
        self._render_code()

    def watch_setup_only(self) -> None:
        self._render_code()

    def watch_edited(self) -> None:
        self._render_code()

    def _render_code(self) -> None:
        parts = []
        if self.setup.strip():
            parts.append(Text("# setup", style="dim italic"))
            parts.append(_syntax(self.setup))
            if not self.setup_only and self.code.strip():
                parts.append(Text("# code", style="dim italic"))
        if not self.setup_only and self.code.strip():  # no code (a symptoms-first repair's, hidden): no panel
            parts.append(_syntax(self.code))
            if self.edited:
                parts.append(Text("# your edited version is kept: ctrl+e shows it, ctrl+t there restores this",
                                  style="dim italic"))
        self.set_class(not parts, "-empty")
        self.update(Group(*parts))
