"""Start the app: load the course and the profile, then hand both to Textual."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

from tutor.startup import StartupError, ask_on_terminal, open_course_and_profile


def launch(profile: str = "default", lessons: Path | None = None, trust_lessons: bool = False,
           start: str = "map", allow_grants: bool = False, watch: bool = False,
           module: str | None = None, drill: str | None = None, idle_exit: float = 0.0,
           interview: tuple[int | None, str | None] = (None, None)) -> int:
    """``module`` / ``drill`` (--module ID, --drill [MODULE/]ID): open there instead of resuming;
    one that does not exist or is not open is refused before the screen is taken, like plain mode."""
    # No cyclic garbage collection until the map's first frame: start-up makes next to no garbage, but
    # the collector's passes over the parsed course (hundreds of thousands of objects) were ~70 ms of it.
    # Then the objects alive at that point (the course, Textual's own) are frozen out of later passes.
    gc.disable()
    try:
        return _launch(profile, lessons, trust_lessons, start, allow_grants, watch, module, drill, idle_exit, interview)
    finally:
        gc.enable()


def _collect_from_now_on() -> None:
    gc.freeze()
    gc.enable()


def _launch(profile: str, lessons: Path | None, trust_lessons: bool, start: str, allow_grants: bool, watch: bool,
            module: str | None, drill: str | None, idle_exit: float = 0.0,
            interview: tuple[int | None, str | None] = (None, None)) -> int:
    try:
        course, store = open_course_and_profile(profile, lessons, trust_lessons, consent=ask_on_terminal,
                                                allow_grants=allow_grants)
    except StartupError as exc:
        print(f"pytorch-tutor: {exc}", file=sys.stderr)
        return 2
    session = None
    begin = None
    if module is not None or drill is not None:  # refused before the screen is taken, like plain mode
        from tutor.safe_text import inert
        from tutor.session import Session

        session = Session(course, store, author=watch)
        try:
            begin = session.start_point(module, drill)
        except ValueError as exc:
            store.close()
            print(f"pytorch-tutor: {inert(str(exc))}", file=sys.stderr)
            return 2
    app = None
    try:
        from tutor.app.app import TutorApp  # Textual is imported only when the app really starts

        # The app makes its sandbox and starts the zygote once the first frame is drawn (TutorApp.on_ready).
        app = TutorApp(course, store, profile_name=profile, start=start, watch=watch, session=session, begin=begin,
                       idle_exit=idle_exit, interview=interview)
        app.after_first_frame(_collect_from_now_on)
        app.run()
    finally:
        if app is not None:
            app.close_sandbox_sync()
        store.close()
    return app.return_code or 0
