"""The map at 80x24: wrapped titles keep their state under the title; "needs" and "Requires" agree (issue 12 item 18)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from tests.ui.conftest import settle, text_of

LESSONS = Path(__file__).resolve().parents[2] / "lessons"


async def test_wrapped_titles_keep_their_state_indented_and_needs_matches_requires(make_app):
    app = make_app(LESSONS)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        listing = app.screen.query_one("#modules", OptionList)
        lines = [strip.text for strip in listing.render_lines(listing.region.reset_offset)]
        inner = [line.strip("▊▎│ ") for line in lines]
        title_line = next(i for i, line in enumerate(lines) if "02  Tensor Creation" in line)
        start = lines[title_line].index("Tensor")
        # the title wraps at 80 columns: its continuation and "needs 01" start under the title, not at the edge
        continuation = lines[title_line + 1]
        assert "needs 01" in continuation, inner[title_line:title_line + 2]
        assert continuation[:start].strip("▊▎│ ") == "" and continuation[start] != " "

        listing.highlighted = listing.get_option_index("38")
        await pilot.pause()
        details = text_of(app.screen.query_one("#details"))
        state = app.session.state("38")
        needs = state.reason.removeprefix("needs ").split(", ")
        requires = details.split("Requires: ", 1)[1].splitlines()[0]
        named = [part.split(" ")[0] for part in requires.split(", ")]
        assert needs == [r for r in named if r in needs], (needs, requires)  # same modules, same order
        assert all(f"{r} " in requires for r in named)  # each requirement with its state


async def test_drill_questions_show_code_without_raw_backticks(make_app):
    app = make_app(LESSONS)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.open_item("01", "confirm-the-build")
        await pilot.pause()
        questions = [text_of(q) for q in app.screen.query(".ask-question")]
        assert any("torch.__version__" in q for q in questions)
        assert not any("`" in q for q in questions), questions


async def test_back_on_the_map_the_cursor_is_on_the_module_just_opened(make_app, mini_course_dir):
    # issue 36 item 7: the cursor stayed on the finished module.
    from tutor.tutoring.reports import ModuleRef

    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        listing = app.screen.query_one("#modules", OptionList)
        assert listing.highlighted_option.id == "01"
        app.open_module("01")
        await settle(app, pilot)
        app.announce_unlocked((ModuleRef("02", app.session.slot("02").title),))  # what a report that unlocks says
        app.back_to_map()
        await settle(app, pilot)
        assert app.screen.query_one("#modules", OptionList).highlighted_option.id == "02"
        assert any(n.message.startswith("Unlocked: 02 ") for n in app._notifications)
        # once: the learner's own moves are not overridden later
        listing = app.screen.query_one("#modules", OptionList)
        listing.highlighted = listing.get_option_index("01")
        app.screen.refresh_map()
        assert listing.highlighted_option.id == "01"


async def test_down_leaves_the_search_box_and_a_locked_module_offers_its_test_out(make_app, mini_course_dir):
    # issue 36 item 6: Down stayed in the search box; the palette on a locked module only said "locked".
    from tutor.app.screens.placement import PlacementScreen

    app = make_app(mini_course_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", "0", "2")
        await pilot.press("down")
        listing = app.screen.query_one("#modules", OptionList)
        assert app.screen.focused is listing and listing.highlighted_option.id == "02"

        app.open_module("02")  # what the palette's "Open 02 …" does on a locked module
        await pilot.pause()
        assert "test out of it" in [n.message for n in app._notifications][-1]
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        for key in "Test out of 02":
            await pilot.press("space" if key == " " else key)
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, PlacementScreen)
