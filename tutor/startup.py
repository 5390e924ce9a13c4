"""What every front end does first: find the course, check it may run here, open the profile."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from tutor.course.loader import Course, is_course_dir, load_course
from tutor.locations import builtin_course_dir, profile_path
from tutor.progress.store import ProfileError, ProfileStore


class StartupError(Exception):
    """Something the learner must fix before the tutor can start; the message says what."""


def open_course_and_profile(profile: str, lessons: Path | None, trust_lessons: bool = False,
                            consent: Callable[[str], bool] | None = None,
                            allow_grants: bool = False, runs_code: bool = True) -> tuple[Course, ProfileStore]:
    """The course and the profile, ready for a front end: the one way every command opens them.

    ``consent`` asks the learner a yes/no question (a front end that runs snippets passes
    one; read-only commands pass none and need no consent); ``allow_grants`` answers yes
    on their behalf (``--allow-grants``, for scripts). A read-only command (``progress``,
    ``stats``, ``profile``) passes ``runs_code=False``: it runs none of the lessons' code,
    so the sandbox's ability to confine them does not matter.
    """
    root = lessons or builtin_course_dir()
    if not is_course_dir(root):
        raise StartupError(f"{root} has no course.yaml; point --lessons at a course directory")
    if lessons is not None and runs_code:  # someone else's lessons: only where the sandbox confines them, or trusted
        from tutor.sandbox.client import third_party_refusal

        refusal = third_party_refusal([lessons], builtin_course_dir(), trust_lessons)
        if refusal:
            raise StartupError(refusal)
    course = load_course(root, "" if lessons is None else str(root))
    try:
        store = ProfileStore.open(profile_path(profile), course.identity)
    except ProfileError as exc:
        raise StartupError(str(exc)) from None
    if lessons is not None and (consent is not None or allow_grants):
        try:
            _accept_grants(course, store, consent, allow_grants)
        except StartupError:
            store.close()
            raise
    return course, store


def ask_on_terminal(question: str) -> bool:
    """A yes/no question on the controlling terminal; no terminal means no."""
    import sys

    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    print(question + " [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        return sys.stdin.readline().strip().lower() in ("y", "yes")
    except (OSError, KeyboardInterrupt):
        return False


def _accept_grants(course: Course, store: ProfileStore, consent: Callable[[str], bool] | None,
                   allow_grants: bool) -> None:
    """A pack's sandbox grants need the learner's yes once (again when it asks for more)."""
    from tutor.course import grants

    wanted = unaccepted_grants(course, store)
    if not wanted:
        return
    key = grants.pack_key(course.root)
    accepted = set((store.setting(key) or "").split())
    refusal = grants_refusal(course.root, wanted, allow_grants, consent)
    if refusal:
        raise StartupError(refusal)
    store.set_setting(key, " ".join(sorted(accepted | set(wanted))))


def grants_refusal(root: Path, wanted: dict[str, list[str]], allow_grants: bool,
                   consent: Callable[[str], bool] | None) -> str:
    """Why a pack's drills may not have what they ask the sandbox for ("" when they may).

    The one consent rule of every command that runs a pack's drills (the app, plain mode, ``check``,
    ``pytest --lessons``): nothing asked for, or ``--allow-grants`` (scripts, CI), or the learner's yes
    to the question listing each grant and its drills. No terminal to ask on means no.
    """
    from tutor.course import grants

    if not wanted or allow_grants:
        return ""
    question = (f"The lessons in {root} ask the sandbox for more than its default confinement:\n"
                f"{grants.describe(wanted)}\nAllow this for this pack?")
    if consent is not None and consent(question):
        return ""
    return (f"{question.rsplit(chr(10), 1)[0]}\nNot allowed, so nothing was started. Answer yes when "
            "asked, or pass --allow-grants (scripts), to use this pack.")


def unaccepted_grants(course: Course, store: ProfileStore) -> dict[str, list[str]]:
    """The sandbox grants the course's drills ask for that the learner has not accepted for this pack
    (all of them, with their drills, when any is new; {} when every one was accepted)."""
    from tutor.course import grants

    wanted = grants.requested(course.modules())
    accepted = set((store.setting(grants.pack_key(course.root)) or "").split())
    return {} if set(wanted) <= accepted else wanted
