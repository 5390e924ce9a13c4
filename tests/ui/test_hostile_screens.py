"""The hostile pack, its code too, and the hostile profile (tests/hostile_pack.py) through the app's screens with Pilot (issue 28):
what each screen renders holds no raw control character, and the pack's markup is shown as text, never
turned into a click action or a link."""

from __future__ import annotations

from tests.hostile_pack import poison_code, raw_controls, write_hostile_export, write_hostile_pack
from tests.ui.conftest import SIZE, settle
from tests.ui.test_lesson_text_is_inert import IdleSandbox
from tutor.app.app import TutorApp
from tutor.app.screens.drill import DrillScreen
from tutor.course.loader import load_course
from tutor.progress.store import ProfileStore
from tutor.progress.transfer import import_profile


def rendered(app) -> tuple[str, list]:
    """The screen as the terminal receives it: its text, and the styles its segments carry."""
    strips = app.screen._compositor.render_strips()
    segments = [segment for strip in strips for segment in strip]
    return "\n".join(strip.text for strip in strips), [s.style for s in segments if s.style]


def assert_screen_inert(app, where: str) -> str:
    text, styles = rendered(app)
    assert raw_controls(text) == [], where
    for style in styles:
        assert "passwd" not in (style.link or ""), f"{where}: the pack's [link=...] became a link"
        assert "app.quit" not in repr(style.meta), f"{where}: the pack's [@click=...] became an action"
    return text


async def test_screens_show_a_hostile_pack_and_profile_inert(tmp_path):
    pack = poison_code(write_hostile_pack(tmp_path / "pack"))
    store = ProfileStore.open(tmp_path / "p.sqlite")
    import_profile(store, write_hostile_export(tmp_path / "export.json"))  # the profile as `profile import` takes it
    app = TutorApp(load_course(pack), store, sandbox=IdleSandbox())
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            shown = assert_screen_inert(app, "map")
            assert "[@click=app.quit]Q[/]" in shown  # shown as the text it is
            for key, where in (("f3", "stats"), ("f2", "review"), ("f1", "help")):
                await pilot.press(key)
                await settle(app, pilot)
                assert_screen_inert(app, where)
                await pilot.press("escape")
                await settle(app, pilot)
            app.open_item("01", "transpose-strides")  # the drill whose code is poisoned
            await settle(app, pilot)
            assert isinstance(app.screen, DrillScreen)
            shown = assert_screen_inert(app, "drill")
            assert "[@click=app.quit]" in shown and "x.t()" in shown
            for key, where in (("ctrl+g", "drill with a hint"), ("ctrl+e", "drill's editor")):
                await pilot.press(key)
                await settle(app, pilot)
                assert_screen_inert(app, where)
            assert app.is_running
    finally:
        store.close()
