"""Shared fixtures: every test gets its own profile home; courses are loaded fresh.

Sandboxes for tests outside ``tests/sandbox`` (which has its own, per tier):

* ``scripted_sandbox``: real results replayed (``tests/scripted_sandbox.py``), for flow tests of
  the TUI and plain mode; a request the script lacks fails the test, naming it;
* ``real_sandbox``: one real zygote for the whole session, lent to each test (closing it is
  left to the session; a test must leave nothing running in it).
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.scripted_sandbox import ScriptedSandbox, load_script, recording, save_script
from tutor.course.loader import load_course
from tutor.locations import CACHE_ENV

FIXTURES = Path(__file__).parent / "fixtures"
MINI_COURSE = FIXTURES / "mini_course"


def pytest_configure(config):
    """One parsed-course cache for the session (entries are keyed by content, so sharing is safe),
    never the user's own: collection already loads the built-in course."""
    if not os.environ.get(CACHE_ENV):
        os.environ[CACHE_ENV] = tempfile.mkdtemp(prefix="pytorch-tutor-test-cache-")
        config.add_cleanup(lambda: shutil.rmtree(os.environ.pop(CACHE_ENV), ignore_errors=True))


@pytest.fixture(autouse=True)
def tutor_home(tmp_path, monkeypatch):
    home = tmp_path / "tutor-home"
    monkeypatch.setenv("PYTORCH_TUTOR_HOME", str(home))
    return home


@pytest.fixture
def mini_course_dir() -> Path:
    return MINI_COURSE


@pytest.fixture
def mini_course():
    course = load_course(MINI_COURSE)
    assert not course.all_errors(), course.all_errors()
    return course


@pytest.fixture(scope="session")
def shared_sandbox():
    from tutor.course import grants
    from tutor.locations import builtin_course_dir
    from tutor.sandbox.client import Sandbox

    box = Sandbox(read_only=grants.code_dirs(builtin_course_dir()))  # what the built-in course's drills import
    # Started on a thread of its own: the fixture may first be asked for inside a test's event loop.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(box.start_sync).result()
    yield box
    box.close_sync()


class LentSandbox:
    """The session's real sandbox, lent to one test: the test's app may close it; that only ends the loan."""

    def __init__(self, box):
        object.__setattr__(self, "_box", box)

    def __getattr__(self, name):
        return getattr(self._box, name)

    def __setattr__(self, name, value):  # e.g. the app's on_note: the zygote's notes reach the borrower
        setattr(self._box, name, value)

    async def close(self) -> None:
        pass

    def close_sync(self) -> None:
        pass


@pytest.fixture
def real_sandbox(shared_sandbox):
    yield LentSandbox(shared_sandbox)
    shared_sandbox.on_note = None
    assert not shared_sandbox.live, "a run was left in flight in the shared sandbox"


_recorded: dict[str, dict] = {}


@pytest.fixture
def make_scripted_sandbox(request):
    """``make_scripted_sandbox()``: a fresh scripted sandbox (one per app; a relaunch makes another)."""
    made: list[ScriptedSandbox] = []

    def make() -> ScriptedSandbox:
        real = request.getfixturevalue("shared_sandbox") if recording() else None
        box = ScriptedSandbox(load_script(), real=LentSandbox(real) if real is not None else None)
        made.append(box)
        return box

    yield make
    unscripted = [r for box in made for r in box.unscripted]
    for box in made:
        _recorded.update(box.recorded)
    if unscripted:
        shown = "\n".join(f"  code={r.code[:60]!r} asks={[a.key for a in r.asks]}" for r in unscripted)
        pytest.fail(f"runs not in the sandbox script (record them with PYTORCH_TUTOR_RECORD_SANDBOX=1):\n{shown}")


@pytest.fixture
def scripted_sandbox(make_scripted_sandbox) -> ScriptedSandbox:
    return make_scripted_sandbox()


def pytest_sessionfinish(session, exitstatus):
    if _recorded:
        save_script(_recorded)
