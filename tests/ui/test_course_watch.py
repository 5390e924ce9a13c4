"""``--watch``: an author's edit reloads the course in place; a broken edit says where and changes nothing."""

from __future__ import annotations

import asyncio
import re
import shutil

import pytest

from tests.ui.conftest import SIZE, settle, text_of
from tutor.app.course_watch import reload_course
from tutor.app.screens.drill import DrillScreen
from tutor.app.screens.map import MapScreen

OLD_PROMPT = "What dtype does summing an int tensor give?"
NEW_PROMPT = "Which dtype comes out of summing an int64 tensor?"


@pytest.fixture
def pack(tmp_path, mini_course_dir):
    """An author's copy of the mini course, to edit."""
    root = tmp_path / "pack"
    shutil.copytree(mini_course_dir, root)
    return root


def edit(pack, old: str, new: str) -> None:
    path = pack / "01_first.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def prompt_on_screen(app) -> str:
    return text_of(app.screen.query_one("#prompt"))


async def on_sum_dtype(app, pilot) -> None:
    """The author is on the drill they are about to edit."""
    await settle(app, pilot)
    app.open_item("01", "sum-dtype")
    await pilot.pause()


def messages(app) -> list[str]:
    return [n.message for n in app._notifications]


async def test_editing_a_drills_prompt_shows_it_on_the_same_drill(make_app, pack):
    app = make_app(pack)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await on_sum_dtype(app, pilot)
        assert OLD_PROMPT in prompt_on_screen(app)
        edit(pack, OLD_PROMPT, NEW_PROMPT)
        assert reload_course(app)
        await pilot.pause()
        assert isinstance(app.screen, DrillScreen)
        assert (app.screen.module_id, app.screen.drill.id) == ("01", "sum-dtype")
        assert NEW_PROMPT in prompt_on_screen(app)


async def test_a_broken_edit_says_where_keeps_the_old_course_and_a_fix_reloads(make_app, pack):
    app = make_app(pack)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await on_sum_dtype(app, pilot)
        before = app.session.course
        edit(pack, f"prompt: {OLD_PROMPT}", "prompt: [never closed")
        assert not reload_course(app)
        await pilot.pause()
        assert app.is_running and app.session.course is before
        assert any(re.search(r"01_first\.yaml:\d+:\d+", m) and "still in use" in m for m in messages(app))
        assert isinstance(app.screen, DrillScreen) and OLD_PROMPT in prompt_on_screen(app)
        app.open_item("01", "transpose-strides")  # the old course stays usable
        await pilot.pause()
        assert app.screen.drill.id == "transpose-strides"

        edit(pack, "prompt: [never closed", f"prompt: {NEW_PROMPT}")
        assert reload_course(app)
        await pilot.pause()
        assert app.session.course is not before
        assert app.session.module("01").drill("sum-dtype").prompt == NEW_PROMPT
        assert app.screen.drill.id == "transpose-strides"  # still where the author was


async def test_a_removed_drill_lands_on_the_modules_entry_point(make_app, pack):
    app = make_app(pack)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await on_sum_dtype(app, pilot)
        edit(pack, "  - id: sum-dtype\n", "  - id: sum-result-dtype\n")
        assert reload_course(app)
        await pilot.pause()
        assert isinstance(app.screen, DrillScreen)
        assert app.screen.drill.id == app.session.entry_point("01")


async def test_an_edit_asking_for_a_new_grant_is_refused(make_app, pack):
    app = make_app(pack)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        before = app.session.course
        edit(pack, "  - id: sum-dtype\n", "  - id: sum-dtype\n    needs: [exec]\n")
        assert not reload_course(app)
        await pilot.pause()
        assert app.session.course is before
        assert any("more than this pack was allowed" in m and "01/sum-dtype" in m for m in messages(app))
        assert isinstance(app.screen, MapScreen)


async def test_the_watcher_reloads_when_a_file_really_changes(make_app, pack):
    app = make_app(pack, watch=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await on_sum_dtype(app, pilot)
        before = app.session.course
        edit(pack, OLD_PROMPT, NEW_PROMPT)

        async def reloaded() -> None:
            # the watcher may start after the first write: writing the same text again is the same edit
            while app.session.course is before:
                (pack / "01_first.yaml").write_text((pack / "01_first.yaml").read_text())
                await asyncio.sleep(0.1)

        await asyncio.wait_for(reloaded(), timeout=60)
        await pilot.pause()
        assert app.screen.drill.id == "sum-dtype" and NEW_PROMPT in prompt_on_screen(app)


async def test_with_watch_the_author_opens_a_module_whatever_it_requires(make_app, pack):
    """An author writing module 02 need not pass 01 (nor test out of it) to try it: with --watch the map opens
    every written module; a learner's app (no --watch) keeps it locked."""
    learner = make_app(pack)
    async with learner.run_test(size=SIZE, notifications=True) as pilot:
        await settle(learner, pilot)
        assert not learner.session.can_open("02")
    author = make_app(pack, profile="author.sqlite", watch=True)
    async with author.run_test(size=SIZE, notifications=True) as pilot:
        await settle(author, pilot)
        assert author.session.can_open("02")
        author.open_module("02")
        await pilot.pause()
        assert not isinstance(author.screen, MapScreen), type(author.screen)
        assert getattr(author.screen, "module_id", None) == "02"
