"""The footer every screen shows: its keys, compact, so that they fit 80 columns.

The command palette's own hint is left out (ctrl+p is in F1 help and README's key table):
at 80 columns it pushed the screen's last keys off the edge ("^q Qu").
"""

from __future__ import annotations

from textual.widgets import Footer


def key_footer() -> Footer:
    return Footer(compact=True, show_command_palette=False)
