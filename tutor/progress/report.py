"""``pytorch-tutor progress``: the profile as a table."""

from __future__ import annotations

import shutil
from typing import TextIO

from tutor.course.graph import Status
from tutor.course.loader import Course
from tutor.progress.summary import CourseProgress
from tutor.safe_text import inert

TITLE_WIDTH = 52
MIN_TITLE_WIDTH = 16


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def print_progress(profile: str, course: Course, progress: CourseProgress, position: tuple[str, str] | None,
                   out: TextIO) -> int:
    """The table; the caller opened the course and the profile (``tutor.commands.profile``)."""
    print(f"Profile {profile!r} — {course.title}", file=out)
    rows = []
    for slot in course.slots:
        state = progress.states[slot.id]
        p = progress.of(slot.id)
        drills = checks = ""
        if slot.module:
            drills = f"{len(p.drills_done)}/{len(slot.module.drills)}"
            checks = f"{len(p.self_checks_answered & {c.id for c in slot.module.self_checks})}/" \
                     f"{len(slot.module.self_checks)}"
        title = slot.title
        status = state.status.value + (f" ({state.reason})" if state.status == Status.LOCKED else "")
        rows.append((slot.id, title, status, drills, checks, p.last_at[:16].replace("T", " ")))
    header = ("id", "module", "status", "drills", "checks", "last activity")
    # each column as wide as its widest cell: "locked (needs 07, 12)" must not run into the counts;
    # titles give way so that a row fits the terminal
    widths = [max(len(inert(r[i])) for r in [header, *rows]) for i in range(5)]
    room = shutil.get_terminal_size((120, 24)).columns - sum(widths) + widths[1] - 4 - 2 - 16
    widths[1] = max(MIN_TITLE_WIDTH, min(widths[1], TITLE_WIDTH, room))
    rows = [(r[0], _clip(r[1], widths[1]), *r[2:]) for r in rows]
    for row in [header, *rows]:
        cells = [inert(c) for c in row]
        print(f"{cells[0]:<{widths[0]}} {cells[1]:<{widths[1]}} {cells[2]:<{widths[2]}} "
              f"{cells[3]:>{widths[3]}} {cells[4]:>{widths[4]}}  {cells[5]}".rstrip(), file=out)
    done = len(progress.done)
    written = len(course.modules())
    tested_out = f", {len(progress.tested_out)} tested out" if progress.tested_out else ""
    print(f"{done} of {written} written modules done{tested_out}"
          + (f"; you were last at module {position[0]}, {position[1]}" if position else ""), file=out)
    return 0
