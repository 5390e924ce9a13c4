"""Lesson text (titles, ids, errors) reaches notifications as text, never as Textual markup."""

from __future__ import annotations

from pathlib import Path

from tutor.app.app import TutorApp
from tutor.course.loader import load_course
from tutor.progress.store import ProfileStore

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"


class IdleSandbox:
    """Enough of a sandbox for an app that never runs a snippet."""

    tier = "test"
    on_note = None

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass


async def test_notifications_never_parse_markup(tmp_path):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    app = TutorApp(load_course(MINI), store, sandbox=IdleSandbox())
    async with app.run_test() as pilot:
        app.notify("[@click=app.quit]click me[/] \x1b]0;title\x07", title="[b]x[/b]")
        await pilot.pause()
        shown = list(app._notifications)
        assert shown and all(n.markup is False for n in shown)
        last = shown[-1]
        assert "[@click=app.quit]" in last.message and "\x1b" not in last.message
        assert app.is_running  # a live click span would have been the only way to quit here
    store.close()
