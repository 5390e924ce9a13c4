"""Helpers for driving the real app with Pilot."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from textual.widgets import Input, Markdown
from textual.worker import WorkerCancelled

from tutor.app.app import TutorApp
from tutor.course.loader import load_course
from tutor.progress.store import ProfileStore

SIZE = (120, 50)

# The Pilot suite starts a Textual app per test (1-8 s each, ~2.5 min in all on two cores): it
# runs in the full suite (CI) and on its own (`pytest tests/ui`); the fast lane keeps these few
# as its smoke tests of the app.
FAST_LANE = {"test_map_layout.py", "test_startup_order.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = item.path
        if path.parent.name == "ui" and path.parent.parent.name == "tests" and path.name not in FAST_LANE:
            item.add_marker(pytest.mark.slow)


def text_of(widget) -> str:
    """What the learner sees in a Static or Markdown widget, as plain text."""
    if isinstance(widget, Markdown):
        return widget.source or ""
    console = Console(width=200, record=True, file=io.StringIO(), color_system=None)
    console.print(widget.content)
    return console.export_text()


def prompt_text(prompt) -> str:
    """An option list's line (text or any Rich renderable, such as the map's grid) as plain text."""
    console = Console(width=200, record=True, file=io.StringIO(), color_system=None)
    console.print(prompt)
    return " ".join(line.rstrip() for line in console.export_text().splitlines() if line.strip())


def option_texts(listing) -> list[str]:
    return [prompt_text(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]


async def settle(app, pilot) -> None:
    """Wait for the workers that finish (sandbox runs), then for the messages they posted.

    Long-lived watchers are left out: waiting on them would never return.
    """
    finishing = [w for w in app.workers if w.group != "watch"]
    for worker in finishing:
        try:
            await worker.wait()
        except WorkerCancelled:  # cancelled (the learner left the screen) is finished too
            pass
    await pilot.pause()


async def type_into(pilot, selector: str, text: str) -> None:
    field = pilot.app.screen.query_one(selector, Input)
    field.focus()
    field.value = ""
    await pilot.pause()
    await pilot.press(*text) if text else None


@pytest.fixture
def make_app(tmp_path, make_scripted_sandbox):
    """``make_app(course_dir)``: the real app on a scripted sandbox, unless the test passes ``sandbox=``
    (``real_sandbox`` for the end-to-end runs)."""
    stores = []

    def make(course_dir, profile="p.sqlite", **kwargs):
        store = ProfileStore.open(tmp_path / profile)
        stores.append(store)
        if kwargs.get("sandbox") is None:
            kwargs["sandbox"] = make_scripted_sandbox()
        return TutorApp(load_course(course_dir), store, **kwargs)

    yield make
    for store in stores:
        store.close()
