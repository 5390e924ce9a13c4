"""What a screen keeps of what the learner types (a drill's answer boxes and edited code, a self-check's
free-text answer), written to the profile as the learner types.

Not on every key (a profile write is a SQLite commit): at most every ``DELAY`` seconds while typing, and
at once before a run, when the editor opens or closes, and when the screen goes (leaving, quitting).
A terminal lost mid-word loses at most the last ``DELAY`` seconds of typing.
"""

from __future__ import annotations

from typing import Callable

from textual.timer import Timer

DELAY = 0.5


class DraftKeeper:
    def __init__(self, screen, save: Callable[[], None]):
        self._screen = screen
        self._save = save
        self._timer: Timer | None = None

    def changed(self) -> None:
        """Something was typed: saved within ``DELAY`` seconds."""
        if self._timer is None:
            self._timer = self._screen.set_timer(DELAY, self.flush)

    def flush(self) -> None:
        """Save now (a no-op when nothing changed since the last save)."""
        if self._timer is None:
            return
        self._timer.stop()
        self._timer = None
        self._save()
