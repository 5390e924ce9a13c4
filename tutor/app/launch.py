"""Start the app: load the course and the profile, then hand both to Textual."""

from __future__ import annotations

import sys
from pathlib import Path

from tutor.startup import StartupError, ask_on_terminal, open_course_and_profile


def launch(profile: str = "default", lessons: Path | None = None, trust_lessons: bool = False,
           start: str = "map", allow_grants: bool = False, watch: bool = False,
           module: str | None = None, drill: str | None = None) -> int:
    """``module`` / ``drill`` (--module ID, --drill [MODULE/]ID): open there instead of resuming;
    one that does not exist or is not open is refused before the screen is taken, like plain mode."""
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

        session = Session(course, store)
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
        app = TutorApp(course, store, profile_name=profile, start=start, watch=watch, session=session, begin=begin)
        app.run()
    finally:
        if app is not None:
            app.close_sandbox_sync()
        store.close()
    return app.return_code or 0
