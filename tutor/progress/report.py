"""``pytorch-tutor progress``: the profile as a table."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from tutor.course.loader import load_course
from tutor.locations import builtin_course_dir, profile_path
from tutor.progress.store import ProfileStore
from tutor.progress.summary import summarise


def print_progress(profile: str, lessons: Path | None, out: TextIO) -> int:
    course = load_course(lessons or builtin_course_dir(), "")
    store = ProfileStore.open(profile_path(profile), course.identity)
    try:
        if store.notice:
            print(store.notice, file=out)
        progress = summarise(course, store.attempts(), store.position())
        position = store.position()
    finally:
        store.close()
    print(f"Profile {profile!r} — {course.title}", file=out)
    print(f"{'id':<3} {'module':<52} {'status':<12} {'drills':>7} {'checks':>7}  last activity", file=out)
    for slot in course.slots:
        state = progress.states[slot.id]
        p = progress.of(slot.id)
        drills = checks = ""
        if slot.module:
            drills = f"{len(p.drills_done)}/{len(slot.module.drills)}"
            checks = f"{len(p.self_checks_answered & {c.id for c in slot.module.self_checks})}/" \
                     f"{len(slot.module.self_checks)}"
        title = slot.title if len(slot.title) <= 52 else slot.title[:51] + "…"
        status = state.status.value + (f" ({state.reason})" if state.status.value == "locked" else "")
        print(f"{slot.id:<3} {title:<52} {status:<12} {drills:>7} {checks:>7}  {p.last_at[:16].replace('T', ' ')}",
              file=out)
    done = len(progress.done)
    written = len(course.modules())
    print(f"{done} of {written} written modules done"
          + (f"; you were last at module {position[0]}, {position[1]}" if position else ""), file=out)
    return 0
