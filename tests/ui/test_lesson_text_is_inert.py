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


async def test_a_hostile_pack_walked_through_the_app_is_drawn_inert(tmp_path, make_scripted_sandbox):
    # issue 28, the one sanitiser walk: map, details, drill, hints, result, explanation, self-check, stats
    from tests.hostile_pack import raw_controls, write_hostile_pack
    from tests.ui.conftest import settle
    from tutor.app.screens.stats import StatsScreen
    from tutor.session import SELF_CHECKS

    store = ProfileStore.open(tmp_path / "p.sqlite")
    app = TutorApp(load_course(write_hostile_pack(tmp_path / "pack")), store, sandbox=make_scripted_sandbox())
    seen = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        seen.append(app.export_screenshot())
        app.open_item("01", "transpose-strides")
        await settle(app, pilot)
        await pilot.press("ctrl+g", "ctrl+g")
        seen.append(app.export_screenshot())
        app.open_item("01", SELF_CHECKS)
        await settle(app, pilot)
        seen.append(app.export_screenshot())
        app.push_screen(StatsScreen())
        await settle(app, pilot)
        seen.append(app.export_screenshot())
        assert app.is_running  # no click action from the pack's text ran
    store.close()
    for screen in seen:
        assert raw_controls(screen) == []
    assert any("Hint2" in screen for screen in seen) and any("[@click=app.quit]" in s for s in seen)
