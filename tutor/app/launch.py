"""Start the app: load the course and the profile, then hand both to Textual."""

from __future__ import annotations

import sys
from pathlib import Path

from tutor.startup import StartupError, ask_on_terminal, open_course_and_profile


def launch(profile: str = "default", lessons: Path | None = None, trust_lessons: bool = False,
           start: str = "map", allow_grants: bool = False, watch: bool = False) -> int:
    try:
        course, store = open_course_and_profile(profile, lessons, trust_lessons, consent=ask_on_terminal,
                                                allow_grants=allow_grants)
    except StartupError as exc:
        print(f"pytorch-tutor: {exc}", file=sys.stderr)
        return 2
    app = None
    try:
        from tutor.app.app import TutorApp  # Textual is imported only when the app really starts

        # The app makes its sandbox and starts the zygote once the first frame is drawn (TutorApp.on_ready).
        app = TutorApp(course, store, profile_name=profile, start=start, watch=watch)
        app.run()
    finally:
        if app is not None:
            app.close_sandbox_sync()
        store.close()
    return app.return_code or 0
