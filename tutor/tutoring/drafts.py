"""The learner's edits to a drill's code, kept per drill until they reset them.

Leaving a drill and coming back (or going on to the next and returning) finds the code
as the learner left it; ctrl+t (the front end's reset) brings the drill's own code back.
Kept for the app's lifetime: a relaunch starts from the drill's code again.
"""

from __future__ import annotations


class Drafts:
    def __init__(self) -> None:
        self._code: dict[tuple[str, str, str], str] = {}

    def get(self, course: str, module_id: str, drill_id: str) -> str | None:
        return self._code.get((course, module_id, drill_id))

    def keep(self, course: str, module_id: str, drill_id: str, code: str, original: str) -> None:
        """Keep ``code``; the drill's ``original`` code is no draft (nothing to keep)."""
        key = (course, module_id, drill_id)
        if code == original:
            self._code.pop(key, None)
        else:
            self._code[key] = code

    def reset(self, course: str, module_id: str, drill_id: str) -> None:
        self._code.pop((course, module_id, drill_id), None)
