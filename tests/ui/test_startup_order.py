"""The zygote starts after the map's first frame, never before it; the learner can use the map meanwhile (issue 11)."""

from __future__ import annotations

import asyncio

from rich.markdown import Markdown
from textual.widgets import Input, OptionList, Static

from tests.scripted_sandbox import ScriptedSandbox
from tests.ui.conftest import SIZE, settle
from tutor.app.screens.map import MapScreen


class SlowToStart(ScriptedSandbox):
    """A sandbox whose start is seen (what was on screen then) and finishes only when the test says so."""

    def __init__(self, app_of):
        super().__init__(script={})
        self.app_of = app_of
        self.on_screen_at_start = None
        self.go = asyncio.Event()
        self.starts = 0

    async def start(self) -> None:
        self.starts += 1
        app = self.app_of()
        screen = app.screen
        modules = screen.query_one("#modules", OptionList) if isinstance(screen, MapScreen) else None
        # what the terminal shows when the start is asked for: the map, laid out, its modules listed
        details = screen.query_one("#details", Static).content if isinstance(screen, MapScreen) else None
        self.on_screen_at_start = (type(screen).__name__, modules is not None and modules.region.area > 0,
                                   modules.option_count if modules is not None else 0,
                                   # what waits for the first frame (the intro's Markdown) was drawn before it
                                   any(isinstance(part, Markdown) for part in getattr(details, "renderables", ())))
        await self.go.wait()
        self.started = True


async def test_the_zygote_starts_after_the_first_frame_and_the_map_works_while_it_starts(make_app, mini_course_dir):
    holder = {}
    sandbox = SlowToStart(lambda: holder["app"])
    app = holder["app"] = make_app(mini_course_dir, sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert sandbox.starts == 1
        screen_name, laid_out, listed, intro_drawn = sandbox.on_screen_at_start
        assert screen_name == "MapScreen" and laid_out and listed > 0  # asked for only once the map was drawn
        assert intro_drawn  # and after the parts drawn just after the first frame
        assert "sandbox: starting…" in app.sub_title  # the map says it is not ready yet

        # the learner does not wait for it: searching and moving on the map work while it starts
        await pilot.press("slash", "0", "2")
        assert app.screen.query_one("#search", Input).value == "02"
        assert app.screen.query_one("#modules", OptionList).highlighted_option.id == "02"

        sandbox.go.set()
        await settle(app, pilot)
        assert sandbox.started and sandbox.starts == 1
        assert app.sub_title.startswith(f"sandbox: {sandbox.tier.split(' (')[0]} · ")  # and says when it is ready


async def test_at_80_columns_the_header_keeps_the_tier_whole(make_app, mini_course_dir, make_scripted_sandbox):
    # issue 36 item 16: "profile: default · sandbox: tier 1 (namespace…" lost the tier's words at 80x24.
    from textual.widgets._header import HeaderTitle

    from tutor.sandbox.client import TIER_LABELS, Tier

    for tier, shown in ((Tier.NAMESPACES, "sandbox: tier 1 · "), (Tier.WEAK, "sandbox: tier 3 (weak) · ")):
        sandbox = make_scripted_sandbox()
        sandbox.tier = TIER_LABELS[tier]
        app = make_app(mini_course_dir, sandbox=sandbox)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            header = app.screen.query_one(HeaderTitle)
            line = "".join(segment.text for segment in header.render_line(0))
            assert shown in line, line


async def test_a_run_asked_for_while_the_sandbox_starts_says_it_is_queued(make_app, mini_course_dir):
    # issue 36 item 13: Run before the zygote answered showed nothing for ~7 s.
    from tests.ui.conftest import type_into
    from tests.ui.test_flow import status_text

    from tests.scripted_sandbox import load_script

    class RunsWaitForTheStart(SlowToStart):  # as the real sandbox's runs wait for its zygote
        async def run(self, request):
            await self.go.wait()
            return await super().run(request)

    holder = {}
    sandbox = RunsWaitForTheStart(lambda: holder["app"])
    sandbox.script = load_script()
    app = holder["app"] = make_app(mini_course_dir, sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.open_item("01", "transpose-strides")
        await pilot.pause()
        await type_into(pilot, "#ask-0", "1x3")
        await pilot.press("enter")
        await pilot.pause()
        assert "Queued: the sandbox is still starting" in status_text(app)
        sandbox.go.set()
        await settle(app, pilot)
        assert "Queued" not in status_text(app) and "Verified" in status_text(app)
