"""The real app with one profile and two courses: neither sees the other's progress (issue 12, item 1)."""

from __future__ import annotations

import shutil

import pytest
from textual.widgets import OptionList

from tests.ui.conftest import SIZE, settle, option_texts
from tutor.app.screens.drill import DrillScreen
from tutor.app.screens.map import MapScreen
from tutor.course.loader import load_course
from tutor.progress.store import ProfileStore
from tutor.session import Session

pytestmark = pytest.mark.slow


async def test_a_packs_progress_stays_out_of_another_course(make_app, mini_course_dir, tmp_path):
    pack = tmp_path / "pack"
    shutil.copytree(mini_course_dir, pack)
    (pack / "course.yaml").write_text((pack / "course.yaml").read_text().replace("id: mini-course", "id: a-pack"))
    store = ProfileStore.open(tmp_path / "shared.sqlite")
    Session(load_course(pack), store).visit("01", "sum-dtype")
    store.close()

    app = make_app(mini_course_dir, profile="shared.sqlite")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, MapScreen)  # no resume at the pack's position
        listing = app.screen.query_one("#modules", OptionList)
        prompts = option_texts(listing)
        assert any("01  First steps  open" in p for p in prompts), prompts

    again = make_app(pack, profile="shared.sqlite")
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert isinstance(again.screen, DrillScreen) and again.screen.drill.id == "sum-dtype"
