"""The tutor in a real browser: serve-ui, headless Chromium, one drill played through xterm.js."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.browser.cdp import Page
from tests.browser.conftest import ARTIFACTS

pytestmark = pytest.mark.slow

# xterm.js draws on a canvas, so the page's DOM has no text. The terminal object is local to
# textual.js; this hook, installed before any page script, catches it as textual.js assigns
# `this.terminal = new Terminal(…)`, so the test can read the screen from xterm's own buffer.
CATCH_TERMINAL = """
window.__terminals = [];
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "terminal", {value, writable: true, configurable: true, enumerable: true});
    if (value && value.buffer) window.__terminals.push(value);
  },
});
"""
SCREEN_TEXT = """(() => {
  const t = window.__terminals[0];
  if (!t) return "";
  const b = t.buffer.active, lines = [];
  for (let y = 0; y < t.rows; y++) {
    const line = b.getLine(b.viewportY + y);
    lines.push(line ? line.translateToString(true) : "");
  }
  return lines.join("\\n");
})()"""


async def screen_when(page: Page, *wanted: str, timeout: float = 60.0) -> str:
    """The terminal's text once every string in ``wanted`` is on it (a condition, polled)."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = await page.evaluate(SCREEN_TEXT)
        if all(w in text for w in wanted):
            return text
        await asyncio.sleep(0.1)
    shot = await page.screenshot(ARTIFACTS / "serve_ui_failure.png")
    raise AssertionError(f"never saw {wanted!r} (screenshot: {shot}); the screen was:\n{text}")


async def screen_settled(page: Page, still_reads: int = 5, timeout: float = 30.0) -> str:
    """The terminal's text once it stops changing (the result panel scrolls into view after a run;
    keys typed during that scroll were seen lost, so the test waits as a reading learner does)."""
    deadline = time.monotonic() + timeout
    previous, same = None, 0
    while time.monotonic() < deadline and same < still_reads:
        text = await page.evaluate(SCREEN_TEXT)
        same = same + 1 if text == previous else 0
        previous = text
        await asyncio.sleep(0.1)
    return previous or ""


async def answer_box(page: Page) -> str:
    """What the answer box under the question holds, as drawn."""
    lines = (await page.evaluate(SCREEN_TEXT)).splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip() == "y.stride()")
    return lines[at + 2].strip().strip("▊▎").strip()


async def clear_answer(page: Page, timeout: float = 30.0) -> None:
    """Backspace one character at a time, each seen gone before the next (keys sent in a burst
    after a run were seen lost: see the report of issue 19)."""
    deadline = time.monotonic() + timeout
    text = await answer_box(page)
    while text and not text.startswith("Type ") and time.monotonic() < deadline:  # "Type …": the placeholder
        await page.press("Backspace", 8)
        while time.monotonic() < deadline and (now := await answer_box(page)) == text:
            await asyncio.sleep(0.05)
        text = now
    assert not text or text.startswith("Type "), f"the answer box still holds {text!r}"


async def type_answer(page: Page, answer: str) -> None:
    """Type into the focused answer box, see it there, then press Enter (a key typed while the app
    is still moving focus would be lost; the learner would see it was, and so does the test)."""
    await page.type_text(answer)
    await screen_when(page, f"▊  {answer}")
    await page.press("Enter", 13, "\r")


async def test_a_learner_plays_a_drill_in_chromium(serve_ui, chromium, mini_course_dir):
    server = serve_ui("--lessons", str(mini_course_dir), "--trust-lessons")
    assert "Listening on loopback only" in "".join(server.output)
    page = await Page.open(chromium.devtools_port())
    try:
        await page.send("Page.addScriptToEvaluateOnNewDocument", source=CATCH_TERMINAL)
        await page.navigate(server.url)  # the address serve-ui printed, token included
        await screen_when(page, "First steps", "Second steps")  # the module map
        # the token went into an HttpOnly cookie and out of the address bar (and the history)
        assert await page.evaluate("location.search") == ""
        assert server.token not in await page.evaluate("document.cookie + location.href")
        await page.evaluate("window.__terminals[0].focus()")
        await screen_settled(page)

        await page.press("Enter", 13, "\r")
        await screen_when(page, "y.stride()")  # the drill's question
        await screen_settled(page)

        await type_answer(page, "(3,1)")  # no spaces: each backspace visibly changes the box
        # the status, then the result panel as it scrolls into view: the whole verdict, whenever it is drawn
        await screen_when(page, "Not yet", "stride, dim 0: you said 3, observed 1", "a transpose copies the data")
        await screen_settled(page)

        await clear_answer(page)
        await type_answer(page, "(1,3)")
        await screen_when(page, "Verified")

        shot = await page.screenshot(ARTIFACTS / "serve_ui_drill.png")
        print(f"screenshot: {shot}")
        assert shot.stat().st_size > 10_000
    finally:
        await page.close()


async def test_another_sites_page_in_the_same_browser_gets_no_tutor(serve_ui, chromium, mini_course_dir):
    """The browser holds the tutor's cookie; a page from another origin (here http://localhost:PORT,
    another site than 127.0.0.1 to the browser) opens a websocket to the tutor: refused, nothing starts."""
    server = serve_ui("--lessons", str(mini_course_dir), "--trust-lessons")
    page = await Page.open(chromium.devtools_port())
    try:
        await page.navigate(server.url)
        server.wait_for_line("tab opened: 1 of 4")  # the tutor's own page: its cookie is set, its tutor started
        await page.navigate(server.base.replace("127.0.0.1", "localhost"))  # no token for that name: a refusal page
        assert "no valid token" in await page.evaluate("document.body.innerText")
        outcome = await page.evaluate(f"""new Promise(done => {{
            const ws = new WebSocket("{server.base.replace('http', 'ws')}ws?width=80&height=24");
            ws.onopen = () => done("open");
            ws.onclose = () => done("closed");
        }})""")
        assert outcome == "closed"
        server.wait_for_line("refused GET /ws: a request from another site")
        assert len(server.lines("tab opened")) == 1  # only the tutor's own page got one
    finally:
        await page.close()
