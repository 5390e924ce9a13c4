"""``pytorch-tutor class watch``: the live view in a terminal, read again every few seconds.

Paths are learners' profiles (or exports), or directories searched for profiles (``*.sqlite``)
again at every refresh, so a learner who starts late appears. Nothing is written; a file that
cannot be read is named under the table with the reason.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TextIO

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from tutor.classroom.live import IDLE_MINUTES, STUCK_MINUTES, WRONG_RUNS, ClassNow, class_now
from tutor.course.loader import Course
from tutor.safe_text import inert
from tutor.wording import count

MAX_PROFILES = 1000  # found in the directories given, per refresh


def profiles_in(paths: list[Path]) -> list[Path]:
    """The files to read: each file given, and the profiles under each directory given (not set-aside damaged ones)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.sqlite") if ".damaged-" not in p.name)[:MAX_PROFILES]
        else:
            found.append(path)
    return found[:MAX_PROFILES]


def view(now: ClassNow, title: str) -> Group:
    """The class as a Rich renderable: who is stuck first, then everyone, then what went wrong lately."""
    table = Table(expand=True, title=f"{inert(title)} — {now.at.astimezone():%H:%M:%S}, "
                                     f"{count(len(now.learners), 'learner')}, {len(now.stuck)} stuck")
    for column in ("learner", "now at", "attempts", "wrong", "minutes", "state"):
        table.add_column(column, overflow="fold")
    for r in now.learners:
        if not r.module:
            state, at = "not started", "—"
        else:
            at = f"{r.module} {inert(r.drill)}"
            state = (f"STUCK ({r.why})" if r.stuck else f"idle {r.idle_minutes:.0f} min" if
                     r.idle_minutes >= IDLE_MINUTES else "solved it" if r.solved else "working")
        style = "bold red" if r.stuck else ""
        table.add_row(inert(r.name), at, str(r.attempts), str(r.wrong), f"{r.minutes:.0f}", state, style=style)
    parts: list = [table]
    if now.stuck_at:
        parts.append(Text("Stuck at: " + "; ".join(f"{inert(d)} ({n})" for d, n in now.stuck_at)))
    parts.append(Text("Misconceptions in the last hour: "
                      + ("; ".join(f"{inert(t)} ({n})" for t, n in now.misconceptions) or "none")))
    parts.append(Text(f"Stuck: not yet right on the current drill after {WRONG_RUNS} wrong attempts or "
                      f"{STUCK_MINUTES:g} minutes; idle after {IDLE_MINUTES:g} minutes without an attempt.",
                      style="dim"))
    parts += [Text(f"left out: {line}", style="yellow") for line in now.refused]
    return Group(*parts)


def watch(course: Course, paths: list[Path], out: TextIO, every: float = 5.0, once: bool = False) -> int:
    """Show the class until interrupted (``once``: one view, for a script or a test); 2 when nothing is readable."""
    console = Console(file=out, highlight=False, markup=False, width=None if out.isatty() else 120)
    while True:
        now = class_now(course, profiles_in(paths))
        if once or not out.isatty():
            console.print(view(now, course.title))
            return 0 if now.learners else 2
        console.clear()
        console.print(view(now, course.title))
        console.print(Text(f"read again every {every:g} s; ctrl+c stops", style="dim"))
        try:
            time.sleep(every)
        except KeyboardInterrupt:
            return 0
