"""The drill form and the editor from the keyboard (issue 12 items 6, 15, 16, 17)."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Input, TextArea

from tests.ui.conftest import SIZE, settle, text_of, type_into
from tutor.app.screens.drill import ConfidenceChoice
from tutor.app.widgets.code_editor import CodeEditor
from tutor.app.widgets.code_view import CodeView

EXPERIMENT = "y = x.t().contiguous()\n"  # a scripted run (tests/fixtures/sandbox_script.json)


async def predict_right(app, pilot) -> None:
    await type_into(pilot, "#ask-0", "1x3")
    await pilot.press("enter")
    await settle(app, pilot)


def in_view(screen, widget) -> bool:
    page = screen.query_one(VerticalScroll)
    return page.region.contains_region(widget.region) or bool(page.region.intersection(widget.region).height)


async def test_enter_on_the_confidence_row_runs_and_chooses_nothing(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("01", "transpose-strides")
        await pilot.pause()
        await type_into(pilot, "#ask-0", "(3, 1)")
        await pilot.press("tab")
        assert isinstance(app.screen.focused, ConfidenceChoice)
        await pilot.press("enter")  # runs; it does not toggle the highlighted "guessing"
        await settle(app, pilot)
        (attempt,) = app.session.store.attempts()
        assert attempt.confidence is None
        assert "First divergence" in text_of(app.screen.query_one("#result"))

        # arrows and Space choose; the choice is recorded with the next run
        app.screen.query_one(ConfidenceChoice).focus()
        await pilot.press("right")  # the first arrow chooses the highlighted one: guessing
        assert app.screen.confidence() == 1
        await pilot.press("right")
        assert app.screen.confidence() == 2
        await pilot.press("left", "left")
        assert app.screen.confidence() == 3  # wraps round, like the set's own arrows
        await pilot.press("right")
        await pilot.press("enter")
        await settle(app, pilot)
        assert [a.confidence for a in app.session.store.attempts()] == [None, 1]
        assert app.screen.confidence() is None  # each try says its own


async def test_ctrl_e_scrolled_down_brings_the_editor_into_view(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_item("01", "transpose-strides")
        await pilot.pause()
        await type_into(pilot, "#ask-0", "(3, 1)")
        await pilot.press("enter")
        await settle(app, pilot)
        page = app.screen.query_one(VerticalScroll)
        page.scroll_end(animate=False)
        await pilot.pause()
        editor = app.screen.query_one("#editor", TextArea)
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert app.screen.focused is editor
        assert in_view(app.screen, editor), (page.region, editor.region)


async def test_the_editor_is_a_python_editor_and_one_copy_of_the_code(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("01", "transpose-strides")
        await pilot.pause()
        view = app.screen.query_one("#code", CodeView)
        assert "y = x.t()" in text_of(view)
        await predict_right(app, pilot)
        await pilot.press("ctrl+e")
        await pilot.pause()
        editor = app.screen.query_one("#editor", CodeEditor)
        assert editor.language == "python"
        # one copy: the read-only view keeps only the setup while the editor shows the code
        assert "y = x.t()" not in text_of(view) and "torch.arange" in text_of(view)

        editor.load_text("")
        await pilot.press(*"for i in range(3):", "enter")
        assert editor.text == "for i in range(3):\n    "
        await pilot.press(*"if i:", "enter")
        assert editor.text.endswith("    if i:\n        ")
        await pilot.press(*"pass", "enter")
        assert editor.text.endswith("        pass\n    ")  # one level less after pass
        await pilot.press("backspace")
        assert editor.text.endswith("pass\n")  # Backspace in the indentation: a whole level
        await pilot.press(*"    x = 1", "home")
        assert editor.cursor_location == (3, 4)  # Home: the first non-space
        await pilot.press("home")
        assert editor.cursor_location == (3, 0)
        await pilot.press("ctrl+right_square_bracket")
        assert editor.document[3] == "        x = 1"
        await pilot.press("ctrl+a")
        assert editor.selected_text == editor.text
        # the keys are said under the editor
        assert "ctrl+a selects all" in text_of(app.screen.query_one("#editor-keys"))

        # Tab leaves the editor
        await pilot.press("tab")
        assert app.screen.focused is not editor


async def test_edits_are_kept_per_drill_until_reset(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("01", "transpose-strides")
        await pilot.pause()
        await predict_right(app, pilot)
        await pilot.press("ctrl+e")
        await pilot.pause()
        editor = app.screen.query_one("#editor", TextArea)
        editor.load_text("")
        await pilot.press(*EXPERIMENT.rstrip("\n"), "enter")
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert "(2, 1)" in text_of(app.screen.query_one("#result"))

        await pilot.press("ctrl+n")  # away to the next drill and back
        await pilot.pause()
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert app.screen.drill.id == "transpose-strides"
        assert "edited version is kept" in text_of(app.screen.query_one("#code"))
        await pilot.press("ctrl+e")
        await pilot.pause()
        editor = app.screen.query_one("#editor", TextArea)
        assert editor.text == EXPERIMENT

        await pilot.press("ctrl+t")  # reset: the drill's own code
        await pilot.pause()
        assert editor.text == app.screen.drill.code
        await pilot.press("escape")
        app.open_item("01", "transpose-strides")
        await pilot.pause()
        assert "edited version" not in text_of(app.screen.query_one("#code"))


async def test_tab_walks_every_part_of_the_drill_and_pagedown_scrolls_the_page(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_item("01", "sum-dtype")
        await pilot.pause()
        screen = app.screen
        await pilot.press(*"int64", "enter", *"6", "enter")
        await settle(app, pilot)
        await pilot.press("ctrl+e")
        await pilot.pause()
        seen = []
        for _ in range(8):
            seen.append(screen.focused)
            await pilot.press("tab")
        ids = {w.id for w in seen if w is not None}
        assert {"editor", "ask-0", "ask-1", "confidence"} <= ids
        page = screen.query_one(VerticalScroll)
        assert any(w is page for w in seen), "the page itself takes focus, so it can be scrolled"
        # from the answer box, PageDown scrolls the page
        screen.query_one("#ask-0", Input).focus()
        page.scroll_home(animate=False)
        await pilot.pause()
        await pilot.press("pagedown")
        await pilot.pause()
        assert page.scroll_y > 0
        # in the editor, past the file's last line PageDown goes on to the page
        page.scroll_home(animate=False)
        editor = screen.query_one("#editor", TextArea)
        editor.focus()
        editor.move_cursor((editor.document.line_count - 1, 0))
        await pilot.pause()
        await pilot.press("pagedown")
        await pilot.pause()
        assert page.scroll_y > 0


async def focus_walk(pilot, presses: int = 10) -> set[str]:
    seen = set()
    for _ in range(presses):
        focused = pilot.app.screen.focused
        if focused is not None:
            seen.add(focused.id or type(focused).__name__)
        await pilot.press("tab")
    return seen


async def test_tab_reaches_every_part_of_every_screen(make_app, mini_course_dir):
    """Each screen's parts take focus in turn, so each can be read and scrolled from the keyboard."""
    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert {"search", "modules", "details-scroll"} <= await focus_walk(pilot)

        app.open_item("04", "write-relu")  # a lab: the editor, then the page (instructions, result, solution)
        await pilot.pause()
        seen = await focus_walk(pilot)
        assert "editor" in seen and "Page" in seen, seen  # the page: tutor.app.widgets.page.Page
        screen = app.screen
        page = screen.query_one(VerticalScroll)
        await pilot.resize_terminal(80, 14)  # shorter than the lab's page
        page.focus()
        await pilot.pause()
        assert page.max_scroll_y > 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert page.scroll_y > 0, "PageDown scrolls the lab's page once the editor is left"
        await pilot.resize_terminal(80, 24)

        app.open_self_check("01", 0)
        await pilot.pause()
        await pilot.press(*"it swaps strides", "enter")
        await pilot.pause()
        seen = await focus_walk(pilot)
        assert {"answer", "rate-1", "rate-4", "Page"} <= seen, seen

        app.back_to_map()
        app.action_stats()
        await pilot.pause()
        assert "VerticalScroll" in await focus_walk(pilot, 3)


async def test_a_box_below_the_fold_is_announced_and_an_unreadable_one_comes_into_view(make_app, mini_course_dir):
    # issue 36 items 4 and 5: the learner typed blind into a box three pages down; after an unreadable
    # answer the focus went out of view; "No answer yet" stayed under a box after it was filled.
    from tutor.app.screens.drill import BOX_BELOW
    from tutor.app.widgets.page import Page

    app = make_app(mini_course_dir)
    async with app.run_test(size=(80, 12)) as pilot:  # shorter than the drill: the boxes are below
        app.open_item("01", "sum-dtype")
        await settle(app, pilot)
        screen = app.screen
        page, first = screen.query_one(Page), screen.query_one("#ask-0", Input)
        assert page.scroll_y == 0 and first.has_focus  # the prompt first, the box below the fold ...
        assert BOX_BELOW in text_of(screen.query_one("#status"))  # ... and the learner is told where typing goes

        await pilot.press("tab")  # leave the first box empty
        screen.query_one("#ask-1", Input).focus()
        await pilot.press(*"7", "enter")
        await settle(app, pilot)
        problem = first.problem
        assert first.has_focus and "No answer yet" in text_of(problem)
        assert page.region.contains_region(first.region) and page.region.contains_region(problem.region)
        await pilot.press("f")
        await pilot.pause()
        assert first.value == "f" and not problem.has_class("-shown")  # the typed key landed; the note is gone


async def test_keys_typed_in_a_burst_land_in_the_box_they_were_typed_for(make_app, mini_course_dir):
    # issue 36 item 1: under load the focus moved after the next keys were handed out ("noRunt",
    # "tensor(0.6)yes"). A burst posted at once is that load: the app hands every key on before any
    # widget handles one, so a focus move made by a widget's handler comes too late.
    from textual import events

    from tutor.app.widgets.code_editor import CodeEditor

    def burst(app, keys):
        for key in keys:
            app.post_message(events.Key(key, key if len(key) == 1 else None))

    app = make_app(mini_course_dir)
    async with app.run_test(size=SIZE) as pilot:
        app.open_item("01", "sum-dtype")
        await settle(app, pilot)
        burst(app, [*"float32", "enter", *"77"])
        await settle(app, pilot)
        screen = app.screen
        assert screen.query_one("#ask-0", Input).value == "float32"
        assert screen.query_one("#ask-1", Input).value == "77"
        screen.query_one("#ask-1", Input).value = ""
        screen.query_one("#ask-0", Input).focus()
        await pilot.pause()
        burst(app, ["tab", *"6"])  # Tab too
        await settle(app, pilot)
        assert screen.query_one("#ask-1", Input).value == "6" and screen.query_one("#ask-0", Input).value == "float32"

        # ctrl+r right after typing runs what was typed, all of it
        screen.query_one("#ask-0", Input).value = ""
        screen.query_one("#ask-0", Input).focus()
        await pilot.pause()
        burst(app, [*"float32", "ctrl+r"])
        await settle(app, pilot)
        assert app.session.store.attempts()[-1].answers[screen.drill.asks[0].key] == "float32"
