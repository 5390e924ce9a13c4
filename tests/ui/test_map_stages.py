"""The map says whose code each capstone stage is (the decision: tutor.commands.capstone_mine.package_line)."""

from __future__ import annotations

from tests.ui.conftest import SIZE, settle, text_of
from tutor.locations import builtin_course_dir
from tutor.workspace import Workspace, exercise_path


async def test_the_map_shows_which_capstone_stages_are_the_learners_own(make_app):
    app = make_app(builtin_course_dir())
    module = app.session.slot("32").module
    exercise_path(Workspace(app.profile_name, app.session.course.identity), "32", module.drill("build-the-gpt")).write_text("# mine\n", encoding="utf-8")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.screen.show_details("32")
        assert "Your package: stage 4 model.py yours" in text_of(app.screen.query_one("#details"))
        app.screen.show_details("36")
        assert "stage 8 lora.py the reference (not started yet)" in text_of(app.screen.query_one("#details"))
        app.screen.show_details("29")  # no stage lab in 29
        assert "Your package" not in text_of(app.screen.query_one("#details"))
