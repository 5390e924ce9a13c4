"""A scripted sandbox for flow tests of the TUI and plain mode: real results, replayed.

A flow test (open a drill, answer, see the divergence, unlock the next module) is about the
app, not about the sandbox; starting a real zygote for each costs ~3 s. This stand-in answers
each ``run`` with a result the real sandbox gave for exactly that request (recorded in
``tests/fixtures/sandbox_script.json``: the request, and the result as data), so the app's
grading, recording and rendering see what they would see for real. A request the script does
not hold is not guessed at: the run fails and the test fails at teardown naming it.

The script cannot drift from the real sandbox unnoticed: ``tests/sandbox/test_scripted_results.py``
(slow) replays every entry on the real one and compares. To add entries after writing a new
flow test, run it once with ``PYTORCH_TUTOR_RECORD_SANDBOX=1``: runs then go to a real sandbox
and their results are merged into the script.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import types
import typing
from dataclasses import asdict
from pathlib import Path

from tutor.sandbox.results import RunResult
from tutor.sandbox.wire import RunRequest

SCRIPT = Path(__file__).parent / "fixtures" / "sandbox_script.json"
RECORD_ENV = "PYTORCH_TUTOR_RECORD_SANDBOX"
IGNORED = ("seconds", "tier", "note", "serving")  # how long a run took and where, and its run id: not what it observed


# Fields added after entries were recorded, left out while unset so those entries still match: of a request's
# key, and of an observation; and of an observation's trace.
LATER_FIELDS = ("trace", "views", "binds", "rebinds", "hidden", "fixtures", "given", "given_names", "threads",
                "serve", "peer")
# Read from the drill's own sources (its code, solution, starter) by grading: no key of its own.
DERIVED_FIELDS = ("declares",)
LATER_TRACE_FIELDS = ("raised_in",)


def request_key(request: RunRequest) -> str:
    data = asdict(request)
    for name in LATER_FIELDS:
        if not data.get(name):  # None, or an empty list
            data.pop(name, None)
    for name in DERIVED_FIELDS:
        data.pop(name, None)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:24]


def request_from(data: dict) -> RunRequest:
    return rebuild(RunRequest, data)


def result_data(result: RunResult) -> dict:
    data = asdict(result)
    data.pop("exports", None)  # a judged run's learner half: never returned by Sandbox.run
    for key in IGNORED:
        data.pop(key, None)
    if data.get("observation"):
        data["observation"].pop("seconds", None)
        for name in LATER_FIELDS:
            if not data["observation"].get(name):  # None, or an empty list
                data["observation"].pop(name, None)
        for name in LATER_TRACE_FIELDS:
            if not (data["observation"].get("trace") or {}).get(name, True):
                data["observation"]["trace"].pop(name)
    return json.loads(json.dumps(data))  # as the script holds it: tuples are lists


def result_from(data: dict) -> RunResult:
    return rebuild(RunResult, data)


def rebuild(kind, data):
    """``data`` (as ``asdict`` and JSON left it) typed back into ``kind``, from the dataclasses' annotations."""
    if data is None:
        return None
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        names = {f.name for f in dataclasses.fields(kind) if f.init}
        return kind(**{k: rebuild(hints[k], v) for k, v in data.items() if k in names})
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        return rebuild(options[0], data) if len(options) == 1 else data
    if origin is tuple:
        items = args[:1] * len(data) if len(args) == 2 and args[1] is Ellipsis else args
        return tuple(rebuild(t, v) for t, v in zip(items, data))
    if origin is list:
        return [rebuild(args[0], v) for v in data]
    if origin is dict:
        return {k: rebuild(args[1], v) for k, v in data.items()}
    return data


def load_script() -> dict[str, dict]:
    return json.loads(SCRIPT.read_text()) if SCRIPT.exists() else {}


def save_script(entries: dict[str, dict]) -> None:
    merged = {**load_script(), **entries}
    SCRIPT.write_text(json.dumps(dict(sorted(merged.items())), indent=1, sort_keys=True) + "\n")


class ScriptedSandbox:
    """Enough of :class:`tutor.sandbox.client.Sandbox` for the app and plain mode."""

    tier = "scripted (tests)"
    tier_level = "none"
    tier_note = ""

    def __init__(self, script: dict[str, dict] | None = None, real=None):
        self.script = load_script() if script is None else script
        self.real = real  # recording: runs go here and their results are kept
        self.recorded: dict[str, dict] = {}
        self.requests: list[RunRequest] = []
        self.unscripted: list[RunRequest] = []
        self.on_note = None
        self.started = self.closed = False
        self.hold: asyncio.Event | None = None  # set it to make runs wait (a run the learner leaves)
        self.cancelled = 0

    async def start(self) -> None:
        self.started = True

    async def close(self) -> None:
        self.closed = True

    def start_sync(self) -> None:
        self.started = True

    def close_sync(self) -> None:
        self.closed = True

    async def run(self, request: RunRequest) -> RunResult:
        self.requests.append(request)
        try:
            if self.hold is not None:
                await self.hold.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        key = request_key(request)
        if self.real is not None:
            result = await self.real.run(request)
            self.recorded[key] = {"request": asdict(request), "result": result_data(result)}
            return result
        entry = self.script.get(key)
        if entry is None:
            self.unscripted.append(request)
            return RunResult("failed_to_start", message="this request is not in the test's sandbox script")
        return result_from(entry["result"])


def recording() -> bool:
    return os.environ.get(RECORD_ENV) == "1"
