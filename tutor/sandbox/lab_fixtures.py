"""A lab's fixtures: what its tests compute with the reference, kept out of the learner's process.

A capstone stage lab compares the learner's module with the course's reference, and its setup
used to compute that comparison's inputs (the reference's merges, weights, token files) in
both processes, so the learner's process had to read the reference, and could import it as its
own work. ``fixtures:`` holds that code. ``Sandbox.run`` runs it in a process of its own (no
learner code there; the course's code readable), sends its UPPER_CASE names as data into the
learner's process, where the sandbox hides every module the lab forbids, and has the judge's
process run the fixtures itself before the setup (``inner/runner.py``). The data depends only
on the fixtures' text and the course's helper modules, so one run serves every submission.
Standard library only (host side, no torch).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import replace
from typing import Awaitable, Callable

from tutor.sandbox.bindings import bound_names
from tutor.sandbox.results import RunResult
from tutor.sandbox.wire import RunRequest

KEPT = 16  # fixtures' results a sandbox keeps (one per lab the learner has open, more than enough)


def given_names(fixtures: str) -> tuple[str, ...]:
    """The names the learner's process gets from the fixtures: those they bind in UPPER_CASE, read
    from the text (imports and helpers stay behind: the reference is the judge's alone)."""
    return tuple(sorted(n for n in bound_names(fixtures, imports=False) if n.isupper()))


def fixture_request(request: RunRequest) -> RunRequest:
    """The run that computes a lab's fixtures: their code alone, exporting what it binds as data."""
    return RunRequest(code=request.fixtures, timeout=request.timeout, needs=request.needs,
                      modules=request.judge_modules, export=True, threads=request.threads)


class FixtureCache:
    """The data of recent fixtures, by their text and modules, so that a lab's every run needs one."""

    def __init__(self) -> None:
        self._kept: OrderedDict[str, str] = OrderedDict()

    @staticmethod
    def key(request: RunRequest) -> str:
        digest = hashlib.sha256(request.fixtures.encode())
        for name, text in request.judge_modules:
            digest.update(b"\0" + name.encode() + b"\0" + text.encode())
        digest.update(repr(sorted(request.needs)).encode())
        return digest.hexdigest()

    def get(self, key: str) -> str | None:
        if key in self._kept:
            self._kept.move_to_end(key)
        return self._kept.get(key)

    def put(self, key: str, data: str) -> None:
        self._kept[key] = data
        self._kept.move_to_end(key)
        while len(self._kept) > KEPT:
            self._kept.popitem(last=False)


async def fixture_data(run_plain: Callable[[RunRequest], Awaitable[RunResult]], request: RunRequest,
                       kept: FixtureCache) -> str | RunResult:
    """A lab's fixtures as data for its learner's process ("" without any), computed once per text;
    the failed run itself where they could not be computed (the course's error, not the learner's)."""
    if not request.fixtures.strip():
        return ""
    key = kept.key(request)
    data = kept.get(key)
    if data is None:
        made = await run_plain(fixture_request(request))
        obs = made.observation
        if not made.ok or obs is None or obs.error is not None:
            if obs is not None and obs.error is not None:
                obs.error = replace(obs.error, phase="setup", message=f"the lab's fixtures: {obs.error.message}")
            made.exports = b""
            return made
        data = made.exports.decode("utf-8", "replace")
        kept.put(key, data)
    return data
