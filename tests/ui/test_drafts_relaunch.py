"""The app keeps what was typed in a drill across a relaunch, and shares it with plain mode (one profile)."""

from __future__ import annotations

import asyncio
import io

from textual.containers import VerticalScroll
from textual.widgets import Input, TextArea

from tests.ui.conftest import SIZE, settle, text_of
from tutor.app.screens.self_check import SelfCheckScreen
from tutor.plain.plain_tutor import run_plain
from tutor.progress.store import ProfileStore
from tutor.session import SELF_CHECKS, Session


async def test_answers_typed_in_the_app_are_back_after_quitting_and_relaunching(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_item("01", "sum-dtype")
        await pilot.pause()
        await pilot.press(*"float32", "enter", *"7")
        await pilot.press("ctrl+q")  # quit with both typed, nothing run
    again = make_app(mini_course_dir)  # the same profile file, a new app
    async with again.run_test(size=(80, 16)) as pilot:  # shorter than the drill: the boxes are below
        await settle(again, pilot)  # resumes at the drill
        screen = again.screen
        assert [screen.query_one(f"#ask-{i}", Input).value for i in (0, 1)] == ["float32", "7"]
        assert "answers from last time" in text_of(screen.query_one("#status"))
        assert screen.query_one(VerticalScroll).scroll_y == 0  # the drill opens at its top, the prompt first


async def test_answers_kept_while_typing_even_if_the_app_never_exits(make_app, mini_course_dir, tmp_path):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("01", "sum-dtype")
        await pilot.pause()
        await pilot.press(*"uint8")
        screen = app.screen
        reader = ProfileStore.open(tmp_path / "p.sqlite", course=app.session.store.course)  # as another process
        try:
            wanted = {"answer:" + screen.drill.asks[0].key: "uint8"}
            for _ in range(200):  # polled: saved within DELAY of the last key, while the app runs on
                if reader.drafts("01", "sum-dtype") == wanted:
                    break
                await pilot.pause(0.05)
            assert reader.drafts("01", "sum-dtype") == wanted
            assert screen.is_attached  # still on the drill: nothing was left or quit
        finally:
            reader.close()


async def test_a_verified_drill_forgets_its_drafts(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("01", "sum-dtype")
        await pilot.pause()
        await pilot.press(*"int64", "enter", *"6", "enter")
        await settle(app, pilot)
        assert app.session.store.drafts("01", "sum-dtype") == {}
        app.back_to_map()
        await pilot.pause()
        app.open_item("01", "sum-dtype")
        await pilot.pause()
        assert "Verified ✓ before" in text_of(app.screen.query_one("#status"))
        assert app.session.store.drafts("01", "sum-dtype") == {}  # the verified answers in the boxes are no drafts


def plain_launch(path, course, sandbox, script: str, start: tuple[str, str]) -> str:
    store = ProfileStore.open(path)
    try:
        out = io.StringIO()
        run_plain(Session(course, store), "default", io.StringIO(script), out, sandbox, start=start)
        return out.getvalue()
    finally:
        store.close()


async def test_plain_mode_and_the_app_share_drafts(make_app, mini_course_dir, mini_course, make_scripted_sandbox,
                                                 tmp_path):
    # plain mode runs its own event loop: in a thread, as it would in its own process
    script = "(1,)\n\na = torch.ones(3)\nb = a.mean(dim=0)\n.\n:quit\n"  # the symptom, then a repair
    text = await asyncio.to_thread(plain_launch, tmp_path / "p.sqlite", mini_course, make_scripted_sandbox(), script,
                                   ("02", "keepdim-bug"))
    assert "Repaired ✓" in text
    await asyncio.to_thread(plain_launch, tmp_path / "p.sqlite", mini_course, make_scripted_sandbox(), "float32\n",
                            ("01", "sum-dtype"))  # typed, then the input ended
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("01", "sum-dtype")
        await pilot.pause()
        assert app.screen.query_one("#ask-0", Input).value == "float32"
        app.open_item("02", "keepdim-bug")
        await pilot.pause()
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert app.screen.query_one("#editor", TextArea).text == "a = torch.ones(3)\nb = a.mean(dim=0)\n"


async def test_an_experiment_after_a_relaunch_shows_the_last_recorded_answers(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("01", "transpose-strides")
        await pilot.pause()
        await pilot.press(*"(3, 1)", "enter")  # recorded, not verified
        await settle(app, pilot)
    again = make_app(mini_course_dir)
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)  # resumes at the drill
        await pilot.press("ctrl+e")
        await pilot.pause()
        editor = again.screen.query_one("#editor", TextArea)
        editor.load_text("")
        await pilot.press(*"y = x.t().contiguous()", "enter", "ctrl+r")  # a scripted run
        await settle(again, pilot)
        result = text_of(again.screen.query_one("#result"))
        assert "your last answer" in result and "(3, 1)" in result, result  # it said "—" after a relaunch


async def test_a_free_text_self_check_answer_is_back_after_quitting_until_it_is_answered(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("01", SELF_CHECKS)
        await pilot.pause()
        assert isinstance(app.screen, SelfCheckScreen) and not app.screen.check.is_choice
        await pilot.press(*"only the strides swap")
        await pilot.press("ctrl+q")  # quit mid-answer, nothing submitted
    again = make_app(mini_course_dir)  # the same profile file, a new app: it resumes at the self-check
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        screen = again.screen
        assert isinstance(screen, SelfCheckScreen) and screen.index == 0
        assert screen.query_one("#answer", Input).value == "only the strides swap"
        await pilot.press("enter")  # answered: the model answer, and nothing left to keep
        await settle(again, pilot)
        assert screen.awaiting_rating
        assert again.session.store.drafts("01", SELF_CHECKS) == {}
        await pilot.press("3", "ctrl+n")  # the multiple-choice question: a letter is no draft
        await pilot.press("a")
        assert screen.index == 1
        await pilot.press("escape")  # leaving flushes what is pending
        await settle(again, pilot)
        assert not screen.is_attached and again.session.store.drafts("01", SELF_CHECKS) == {}
