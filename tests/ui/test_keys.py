"""One table of keys: the screens' bindings make the footer, F1 help and README's table (issue 12 items 3, 18)."""

from __future__ import annotations

from pathlib import Path

from textual.command import CommandList
from textual.widgets import Markdown
from textual.widgets._footer import FooterKey

from tests.ui.conftest import SIZE, settle, text_of
from tutor.app.keys import key_name, key_rows, readme_section, screens
from tutor.app.screens.help import HelpScreen
from tutor.app.screens.map import MapScreen

README = Path(__file__).resolve().parents[2] / "README.md"
LESSONS = Path(__file__).resolve().parents[2] / "lessons"


def test_readme_key_table_is_the_generated_one():
    text = README.read_text(encoding="utf-8")
    assert readme_section() in text, "README.md's key table is stale: paste `python -m tutor.app.keys` over it"


def test_every_binding_is_in_the_table_with_its_help():
    rows = key_rows()
    for where, screen in screens():
        for binding in screen.BINDINGS:
            if not binding.description:
                continue
            for key in binding.key.split(","):
                name = key_name(key.strip())
                assert any(name in row.keys.split(" / ") and where in row.where and
                           row.what == (binding.tooltip or binding.description) for row in rows), (where, key)
    # the previous-item key is the one the screens bind (it once said ctrl+b, which did nothing)
    assert any("ctrl+o" in row.keys and "previous" in row.what for row in rows)
    assert not any("ctrl+b" in row.keys for row in rows)


async def test_f1_help_shows_the_generated_table(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.open_item("01", "transpose-strides")
        await pilot.pause()
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        source = app.screen.query_one(Markdown).source
        for row in key_rows():
            assert f"| {row.keys} | {row.where} | {row.what} |" in source
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_at_80_columns_every_footer_key_is_whole(make_app, mini_course_dir):
    """Each screen's footer at 80x24: every key it shows ends inside the screen (it once ended "^q Qu")."""
    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        openers = [lambda: None, lambda: app.open_item("01", "transpose-strides"),
                   lambda: app.open_item("04", "write-relu"), lambda: app.open_self_check("01", 0),
                   app.action_review, app.action_stats, app.open_interview]
        for open_screen in openers:
            open_screen()
            await pilot.pause()
            for _ in range(50):  # a screen that refreshes its bindings on mount recomposes the footer once more
                keys = list(app.screen.query(FooterKey))
                shown = {a.binding.description for a in app.screen.active_bindings.values() if a.binding.show}
                if shown <= {k.description for k in keys} and "Quit" in {k.description for k in keys}:
                    break
                await pilot.pause()
            assert shown <= {k.description for k in keys}, type(app.screen).__name__
            assert "Quit" in {k.description for k in keys}
            for key in keys:
                assert key.region.right <= 80, (type(app.screen).__name__, key.description, key.region)
            app.back_to_map()
            while len(app.screen_stack) > 2:
                app.pop_screen()
            await pilot.pause()


async def test_at_80_columns_the_drill_footer_is_whole_while_editing(make_app, mini_course_dir):
    """The editor's keys (ctrl+t reset) pushed "Quit" and "Help" off the edge; ctrl+t is said under the editor."""
    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_item("01", "transpose-strides")
        await pilot.pause()
        await pilot.press(*"(3, 1)", "enter")
        await settle(app, pilot)
        await pilot.press("ctrl+e")
        await pilot.pause()
        keys = list(app.screen.query(FooterKey))
        assert {"Quit", "Help"} <= {k.description for k in keys}
        for key in keys:
            assert key.region.right <= 80, (key.description, key.region)
        assert "ctrl+t" in text_of(app.screen.query_one("#editor-keys"))


async def palette_options(app, pilot, query: str) -> list[str]:
    await pilot.press("ctrl+p")
    await pilot.press(*query)
    for _ in range(600):  # until the palette's search (a worker of its own) has answered
        results = app.screen.query(CommandList)
        if results and results.first().option_count:
            break
        await pilot.pause(0.05)
    listing = app.screen.query_one(CommandList)
    return [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]


async def test_the_palette_finds_a_lab_by_its_words(make_app):
    """"micrograd" (its id) and "topological" (a tag) find 07's lab, though 07 is locked (issue 12 item 20)."""
    app = make_app(LESSONS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        options = await palette_options(app, pilot, "micrograd")
        assert any("07 › Lab: a scalar autograd engine" in o for o in options), options
        await pilot.press("escape")
        options = await palette_options(app, pilot, "topological")
        assert any("07 › Lab: a scalar autograd engine" in o for o in options), options
        await pilot.press("enter")  # 07 is locked: it says why instead of opening
        await pilot.pause()
        assert isinstance(app.screen, MapScreen)
