"""Interview mode in the app: a whole 15-minute interview on the scripted sandbox, its clock played by the test."""

from __future__ import annotations

from textual.widgets import Input, Markdown, Static

from tests.interview_learner import ANSWERS, REPAIR, question_of
from tests.ui.conftest import SIZE, settle, text_of, type_into
from tutor.app.screens.interview import InterviewScreen
from tutor.app.widgets.code_editor import CodeEditor
from tutor.interview.debrief import interviews
from tutor.progress.store import AttemptKind

STEP = 190  # seconds each answer takes: the fifth answer ends past the 15 minutes


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_a_whole_interview_from_the_map_key_to_the_debrief(make_app, mini_course_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTORCH_TUTOR_HOME", str(tmp_path / "home"))
    app = make_app(mini_course_dir)
    clock = Clock()
    app.interview_clock = clock
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("i")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, InterviewScreen)
        await type_into(pilot, "#answer", "")
        await pilot.press("enter")  # Enter: the 15 minutes
        await type_into(pilot, "#answer", "tensors")
        await pilot.press("enter")
        assert "Type one of: basics, more." in text_of(screen.query_one("#status", Static))
        await type_into(pilot, "#answer", "basics")
        await pilot.press("enter")
        asked = []
        while screen.phase != "done":
            assert screen.phase not in ("length", "scope")
            shown = screen.query_one("#question", Markdown).source or ""
            phrase = question_of("== Question " + shown)
            asked.append(phrase)
            assert f"left of 15 min" in text_of(screen.query_one("#clock", Static))
            clock.now += STEP
            if phrase == "repair":
                editor = screen.query_one("#code", CodeEditor)
                assert editor.display and "keepdim=True" in editor.text  # the seeded code, to repair
                editor.text = REPAIR
                await pilot.press("ctrl+r")
                await settle(app, pilot)
            else:
                answers, confidence, _right = ANSWERS[phrase]
                for answer in answers:
                    await type_into(pilot, "#answer", "")
                    await pilot.press("enter")  # Enter never answers: the same box asks again
                    assert screen.phase in ("ask", "choice", "explain")
                    await type_into(pilot, "#answer", answer)
                    await pilot.press("enter")
                if screen.phase == "rating":
                    feedback = screen.query_one("#feedback", Markdown).source
                    assert "Model answer" in feedback and "swaps strides" in feedback
                    await type_into(pilot, "#answer", "3")
                else:
                    await type_into(pilot, "#answer", confidence)
                await pilot.press("enter")
                await settle(app, pilot)
            assert screen.phase == "next", screen.phase
            status = text_of(screen.query_one("#status", Static)) + (screen.query_one("#feedback", Markdown).source or "")
            assert ("over its" in status) == (phrase != "repair")  # 190 s: over every limit but a repair's 5 minutes
            await type_into(pilot, "#answer", "")
            await pilot.press("enter")
            await pilot.pause()
        assert len(asked) == 5  # 5 x 190 s > 15 min: the fifth answer was the last
        assert "Time is up." in text_of(screen.query_one("#where", Static))
        report = screen.query_one("#feedback", Markdown).source
        assert "# Interview debrief" in report and "15 minutes · the part 'Basics' · 5 questions" in report
        right = sum(ANSWERS[p][2] if p != "repair" else True for p in asked)
        assert f"score {right}/5" in report
        assert not screen.query_one("#answer", Input).display
        await pilot.press("ctrl+s")
        await pilot.pause()
        saved = list((tmp_path / "home" / "interviews").glob("*.md"))
        assert len(saved) == 1 and saved[0].read_text() == report
        await pilot.press("escape")
        assert not isinstance(app.screen, InterviewScreen)
    attempts = app.session.store.attempts()
    assert {a.kind for a in attempts} == {AttemptKind.INTERVIEW} and len(interviews(attempts)) == 1


async def test_escape_ends_an_interview_early_with_the_debrief_of_what_was_answered(make_app, mini_course_dir):
    app = make_app(mini_course_dir)
    app.interview_request = (30, "more")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.open_interview(30, "more")
        await pilot.pause()
        screen = app.screen
        assert screen.phase == "ask" and "1 + 1" in screen.query_one("#question", Markdown).source
        await pilot.press("escape")
        await pilot.pause()
        assert screen.phase == "done"
        assert "No question was answered" in screen.query_one("#feedback", Markdown).source
        await pilot.press("escape")
        assert not isinstance(app.screen, InterviewScreen)
