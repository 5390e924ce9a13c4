"""serve-ui's tabs end a session nobody uses: an open tab pings its websocket, so only the tutor can tell."""

from __future__ import annotations

from tests.ui.conftest import SIZE, settle
from tutor.app.idle import IdleExit
from tutor.web.serve import ServeOptions, app_command


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_the_app_ends_after_the_idle_time_and_a_key_restarts_the_count(make_app, mini_course_dir):
    clock = Clock()
    app = make_app(mini_course_dir, idle_exit=10)
    app.idle_exit = IdleExit(10, clock)  # the same rule on a clock the test moves
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        clock.now += 9 * 60
        app.end_if_idle()
        await pilot.press("down")  # input: the count starts again
        clock.now += 9 * 60
        app.end_if_idle()
        assert app.is_running
        clock.now += 61
        app.end_if_idle()
        await pilot.pause()
        assert not app.is_running  # ended as Ctrl+Q ends it: what was typed is saved as it is typed
    assert "ended after 10 minutes without input" in app.idle_exit.message()


async def test_without_an_idle_time_the_app_never_ends_itself(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.end_if_idle()
        assert app.idle_exit is None and app.is_running


def test_serve_ui_gives_each_tab_its_idle_time():
    assert "--idle-exit 60" in app_command(ServeOptions())
    assert "--idle-exit 5" in app_command(ServeOptions(idle_minutes=5))
    assert "--idle-exit" not in app_command(ServeOptions(idle_minutes=0))
