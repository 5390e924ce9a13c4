"""Start the app: load the course and the profile, then hand both to Textual."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from tutor.course import grants
from tutor.sandbox.client import Sandbox
from tutor.startup import StartupError, ask_on_terminal, open_course_and_profile


def launch(profile: str = "default", lessons: Path | None = None, trust_lessons: bool = False,
           start: str = "map", allow_grants: bool = False, watch: bool = False) -> int:
    try:
        course, store = open_course_and_profile(profile, lessons, trust_lessons, consent=ask_on_terminal,
                                                allow_grants=allow_grants)
    except StartupError as exc:
        print(f"pytorch-tutor: {exc}", file=sys.stderr)
        return 2
    sandbox = _sandbox_starting(course)
    try:
        from tutor.app.app import TutorApp  # Textual is imported only when the app really starts

        app = TutorApp(course, store, sandbox=sandbox, profile_name=profile, start=start, watch=watch)
        app.run()
    finally:
        sandbox.close_sync()
        store.close()
    return app.return_code or 0


def _sandbox_starting(course) -> Sandbox:
    """A sandbox whose zygote starts now, while Textual is imported and the map drawn.

    The zygote imports torch in its own process; the app awaits the same zygote (``Sandbox.start``
    is idempotent) and its header says when it is ready. A failure here is left for the app's own
    start to meet and report, so nothing is printed behind the screen.
    """
    sandbox = Sandbox(read_only=grants.code_dirs(course.root))  # as the app would make it

    def start() -> None:
        try:
            sandbox.start_sync()
        except Exception:  # noqa: BLE001 - reported by the app when it awaits the same start
            pass

    threading.Thread(target=start, name="sandbox-early-start", daemon=True).start()
    return sandbox
