"""A course's Markdown links, clicked in the app (issue 28): only a plain web address reaches the browser,
and only after the learner has seen it and said yes. `javascript:` would run in the tutor page's origin in
browser mode (textual-serve hands the address to `window.open`), `file:` opens the learner's own files, and
any other scheme starts whatever handler the desktop registered; the map's intro emits no terminal link."""

from __future__ import annotations

import shutil
import webbrowser

from tests.ui.conftest import SIZE, settle
from tests.ui.test_hostile_screens import rendered
from tests.ui.test_lesson_text_is_inert import IdleSandbox
from tests.hostile_pack import MINI
from tutor.app.app import TutorApp
from tutor.app.screens.confirm import ConfirmScreen
from tutor.app.screens.drill import DrillScreen
from tutor.course.loader import load_course
from tutor.progress.store import ProfileStore

LINKS = {"js": "javascript:alert(document.cookie)", "file": "file:///etc/passwd", "smb": "smb://evil.example/share",
         "handler": "x-handler:payload", "web": "https://pytorch.org/docs"}


def linked_pack(dst):
    shutil.copytree(MINI, dst)
    module = dst / "01_first.yaml"
    links = " ".join(f"[{name}]({target})" for name, target in LINKS.items())
    text = module.read_text()
    text = text.replace("intro: Two tiny drills and one question.", f'intro: "Read {links} first."')
    text = text.replace('What are `y`\'s strides?"', f'What are `y`\'s strides? See {links}."')
    module.write_text(text)
    return dst


def link_cell(app, target: str) -> tuple[int, int]:
    """Where on the screen the link to ``target`` is drawn: the cell a learner clicks."""
    strips = app.screen._compositor.render_strips()
    for y, strip in enumerate(strips):
        x = 0
        for segment in strip:
            if segment.style and target in repr(segment.style.meta):
                return x, y
            x += segment.cell_length
    raise AssertionError(f"no link to {target} on screen")


async def test_only_a_web_link_is_opened_and_only_after_the_learner_says_yes(tmp_path, monkeypatch):
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **k: opened.append(url) or True)  # what the driver calls
    store = ProfileStore.open(tmp_path / "p.sqlite")
    app = TutorApp(load_course(linked_pack(tmp_path / "pack")), store, sandbox=IdleSandbox())
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            _, styles = rendered(app)  # the map's intro: the addresses shown as text, no terminal link
            assert [s.link for s in styles if s.link] == []
            app.open_item("01", "transpose-strides")
            await settle(app, pilot)
            assert isinstance(app.screen, DrillScreen)
            drill = app.screen

            _, styles = rendered(app)
            clickable = " ".join(repr(s.meta) for s in styles if s.meta)
            assert "javascript:" not in clickable and "file:" not in clickable  # Markdown's own parser refuses those
            for name in ("smb", "handler"):
                await pilot.click(offset=link_cell(app, LINKS[name]))
                await settle(app, pilot)
                assert app.screen is drill, f"{name}: a dialog offered to open it"
                notes = [n.message for n in app._notifications]
                assert any("was not opened" in m and "only http and https" in m for m in notes), notes
            assert opened == []

            await pilot.click(offset=link_cell(app, LINKS["web"]))
            await settle(app, pilot)
            assert isinstance(app.screen, ConfirmScreen) and LINKS["web"] in app.screen.question
            await pilot.press("n")
            await settle(app, pilot)
            assert opened == [] and app.screen is drill

            await pilot.click(offset=link_cell(app, LINKS["web"]))
            await settle(app, pilot)
            await pilot.press("y")
            await settle(app, pilot)
            assert opened == [LINKS["web"]] and app.screen is drill
    finally:
        store.close()
