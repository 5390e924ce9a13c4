"""Start the app: load the course and the profile, then hand both to Textual."""

from __future__ import annotations

import sys
from pathlib import Path

from tutor.course.loader import is_course_dir, load_course
from tutor.locations import builtin_course_dir, profile_path
from tutor.progress.store import ProfileError, ProfileStore


def launch(profile: str = "default", lessons: Path | None = None) -> int:
    root = lessons or builtin_course_dir()
    if not is_course_dir(root):
        print(f"pytorch-tutor: {root} has no course.yaml; point --lessons at a course directory", file=sys.stderr)
        return 2
    course = load_course(root, "" if lessons is None else str(root))
    try:
        store = ProfileStore.open(profile_path(profile))
    except ProfileError as exc:
        print(f"pytorch-tutor: {exc}", file=sys.stderr)
        return 2
    from tutor.app.app import TutorApp  # Textual is imported only when the app really starts

    try:
        app = TutorApp(course, store, profile_name=profile)
        app.run()
    finally:
        store.close()
    return app.return_code or 0
