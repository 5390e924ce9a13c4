"""What every front end does first: find the course, check it may run here, open the profile."""

from __future__ import annotations

from pathlib import Path

from tutor.course.loader import Course, is_course_dir, load_course
from tutor.locations import builtin_course_dir, profile_path
from tutor.progress.store import ProfileError, ProfileStore


class StartupError(Exception):
    """Something the learner must fix before the tutor can start; the message says what."""


def open_course_and_profile(profile: str, lessons: Path | None, trust_lessons: bool) -> tuple[Course, ProfileStore]:
    root = lessons or builtin_course_dir()
    if not is_course_dir(root):
        raise StartupError(f"{root} has no course.yaml; point --lessons at a course directory")
    if lessons is not None:  # someone else's lessons: only where the sandbox can confine them, or if trusted
        from tutor.sandbox.client import third_party_refusal

        refusal = third_party_refusal([lessons], builtin_course_dir(), trust_lessons)
        if refusal:
            raise StartupError(refusal)
    course = load_course(root, "" if lessons is None else str(root))
    try:
        store = ProfileStore.open(profile_path(profile))
    except ProfileError as exc:
        raise StartupError(str(exc)) from None
    return course, store
