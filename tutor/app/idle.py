"""Ending a session nobody is using: a browser tab left open keeps its tutor alive forever otherwise.

In class mode (``serve-ui``) each tab is a tutor process with its own sandbox, and the page pings
its websocket every 15 s, which JupyterHub's idle culler counts as activity: a learner who walked
away with a tab open kept the server (and ~290 MiB per tab) for good. The tutor therefore ends a
session itself once nothing was typed or clicked for ``minutes`` (``serve-ui --idle-minutes``),
after saving what it holds, as Ctrl+Q would; the page says the session ended.
"""

from __future__ import annotations

import time
from typing import Callable

from textual import events

INPUT_EVENTS = (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp, events.Paste)
CHECK_EVERY = 30.0  # seconds between looks at the clock (the cost of a check is nothing)


class IdleExit:
    """Remembers the last input; ``expired()`` says when ``minutes`` have passed without one."""

    def __init__(self, minutes: float, clock: Callable[[], float] = time.monotonic):
        self.seconds = minutes * 60.0
        self.clock = clock
        self.last_input = clock()

    def saw(self, event: events.Event) -> None:
        if isinstance(event, INPUT_EVENTS):
            self.last_input = self.clock()

    def expired(self) -> bool:
        return self.clock() - self.last_input >= self.seconds

    def message(self) -> str:
        minutes = self.seconds / 60
        return (f"This session ended after {minutes:g} minutes without input, and everything was saved. "
                "Reload the page to go on where you left off.")
