"""``--watch``: reload the course when an author edits its YAML, keeping them on the drill they edit.

The reload goes through the launch's own loader (``load_course``, whose parse cache skips the
unchanged module files) and the launch's grant rule: an edit that asks the sandbox for a grant
this pack was not given is refused, and the course from before the edit stays in use. An edit
that does not validate is shown in place (``file:line:column`` for each problem) and also keeps
the previous course; fixing the file reloads it. The third-party refusal needs no second look:
it depends on the pack's directory and on this machine, and an edit changes neither.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tutor.course.loader import Course, load_course
from tutor.startup import unaccepted_grants

if TYPE_CHECKING:
    from tutor.app.app import TutorApp

ERRORS_SHOWN = 8  # a broken edit's first problems; the rest is `pytorch-tutor validate`'s job
DEBOUNCE_MS = 200  # an editor's save is often several writes


def is_lesson_file(path: str) -> bool:
    return path.endswith((".yaml", ".yml"))


def new_problems(old: Course, new: Course) -> list[str]:
    """The problems the reloaded course has that the course in use did not have (as ``file:line:col: …``)."""
    before = {str(e) for e in old.all_errors()}
    return [str(e) for e in new.all_errors() if str(e) not in before]


def reload_course(app: TutorApp) -> bool:
    """Load the course again and put it in use when it may replace the one in use; say why when not.

    Returns whether the course was replaced. The learner stays where they were: the same
    module and drill when both still exist, else the module's entry point, else the map.
    """
    session = app.session
    old = session.course
    new = load_course(old.root, str(old.root))
    problems = new_problems(old, new)
    if problems:
        more = len(problems) - ERRORS_SHOWN
        listed = "\n".join(problems[:ERRORS_SHOWN]) + (f"\n… and {more} more" if more > 0 else "")
        app.notify(f"{listed}\nThe course from before this edit is still in use; save a fix to reload.",
                   title="The edit does not validate", severity="error", timeout=30)
        return False
    if new.identity != old.identity:
        app.notify("The edit changes the course's id, which keys the learner's progress; the course from "
                   "before this edit is still in use. Restart the tutor to use the new id.",
                   title="Not reloaded: a new course id", severity="error", timeout=30)
        return False
    asked = unaccepted_grants(new, session.store)
    if asked:  # the launch's rule: grants are accepted before any drill runs, never by an edit
        from tutor.course import grants

        app.notify(f"The edit asks the sandbox for more than this pack was allowed:\n{grants.describe(asked)}\n"
                   "The course from before this edit is still in use; restart the tutor to be asked.",
                   title="Not reloaded: new sandbox grants", severity="error", timeout=30)
        return False
    session.replace_course(new)
    _stay_in_place(app)
    app.notify(f"Reloaded {new.title or new.root}.", title="Course reloaded", timeout=3)
    return True


def _stay_in_place(app: TutorApp) -> None:
    """Show the drill on screen again from the new course (its edited text), or the nearest place left."""
    from tutor.app.app import lesson_screens
    from tutor.app.screens.map import MapScreen

    screen = app.screen
    if isinstance(screen, lesson_screens()):
        module_id = screen.module_id
        drill = getattr(screen, "drill", None)
        if not app.session.can_open(module_id):
            app.back_to_map()
        elif drill is not None and app.session.module(module_id).drill(drill.id) is not None:
            app.open_item(module_id, drill.id)
        else:  # the drill is gone (or this is the self-check): the module's entry point
            app.open_item(module_id, app.session.entry_point(module_id))
    for shown in app.screen_stack:
        if isinstance(shown, MapScreen) and shown.is_mounted:
            shown.refresh_map()


async def watch_course(app: TutorApp, root: Path) -> None:
    """Reload the course whenever one of its YAML files changes (until the app stops this worker)."""
    from tutor.app.file_watch import file_changes

    async for _ in file_changes(root, is_lesson_file, DEBOUNCE_MS):
        reload_course(app)
