"""The parent side of the sandbox: a warm zygote, one confined child per run.

No torch and no Textual here. :class:`Sandbox` starts the inner side as its own
program (``python -I -S``, ``tutor.sandbox.inner`` run as ``-m`` would: no ``.pth`` file runs) with a minimal environment, talks to
it over a socketpair with length-prefixed JSON frames (``framing.py``; the messages
are declared in ``wire.py``), and turns what comes back into a :class:`RunResult`.
It never trusts the child: result bytes are parsed here with caps on size and depth
and a schema check (``wire.read_observation``), output is
made inert, and grading happens in the UI process (``tutor.grading``), never
from a verdict the child reports.

Trust boundary: the learner's code (a repair, a lab) never runs in the process
whose check decides its verdict. A judged request runs twice: the learner's
process exports what the code computed as plain data (``inner/exchange/``), and a
fresh process runs the setup and the check on that data (``Sandbox.run``).
Prediction drills need no second process: their code is the author's, and the
learner's answers are judged here, in the parent, from the observed values.

The zygote is restarted when it dies, and a run it was doing is retried once
(``RunResult.note`` says so). A reader thread owns the socket, so one
``Sandbox`` works from any event loop (the app's, or ``asyncio.run`` in the CLI)
and from several at once.

Isolation tiers (``wire.Tier``, ordered by strength; chosen by ``inner/probe.py`` once per
process, or forced with ``Sandbox(tier=...)`` / ``$PYTORCH_TUTOR_SANDBOX_TIER``):

* ``"1"``: user, pid, network, ipc, uts and mount namespaces, a private
  read-only root, a size-capped scratch tmpfs, rlimits, Landlock, seccomp;
* ``"2"``: no namespaces: rlimits, Landlock, seccomp (no sockets, no new processes);
* ``"3"``: rlimits and a separate session only: built-in lessons only;
* ``"none"``: no confinement at all, for benchmarks.
"""

from __future__ import annotations

import asyncio
import atexit
import itertools
import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from tutor.sandbox.held_dirs import close_all, hold_dir, resolved_dirs
from tutor.sandbox.judged import run_judged
from tutor.sandbox.lab_fixtures import FixtureCache
from tutor.sandbox.kernel_settings import KernelSettings
from tutor.sandbox.layers import describe_layers
from tutor.sandbox.results import RunResult, from_done
from tutor.sandbox.wire import OUTPUT_LIMIT, SLACK, RunRequest, Tier, granted
from tutor.sandbox.zygote_process import SandboxUnavailable, _Zygote, _ZygoteDied, probe

START_TIMEOUT = 90.0  # importing torch cold can take a while on a loaded machine
GRACE = 10.0  # past the zygote's own allowance (wire.SLACK), the UI stops waiting and treats it as wedged
TIER_ENV = "PYTORCH_TUTOR_SANDBOX_TIER"
TIERS = tuple(t.value for t in Tier)  # what --tier and $PYTORCH_TUTOR_SANDBOX_TIER accept
TIER_LABELS = {
    Tier.NAMESPACES: "tier 1 (namespaces, Landlock, seccomp)",
    Tier.LANDLOCK: "tier 2 (no namespaces: Landlock, seccomp)",
    Tier.WEAK: "tier 3 (weak: built-in lessons only)",
    Tier.NONE: "no isolation (benchmarks only)",
}


# ---------------------------------------------------------------- the public object


class Sandbox:
    """Runs snippets in confined children of a warm zygote."""

    _ids = itertools.count(1)

    def __init__(self, python: str | None = None, output_limit: int = OUTPUT_LIMIT,
                 start_timeout: float = START_TIMEOUT, tier: Tier | str | None = None, prefork: int = 2,
                 read_only: Iterable[str | os.PathLike] = (), compile_cache: str | os.PathLike | None = None,
                 warm_compile: bool = False, output_dir: str | os.PathLike | None = None,
                 kernels: KernelSettings | None = None):
        self.python = python or sys.executable
        # The CPU kernels and intra-op threads every run gets (``kernel_settings.py``); None: the machine's own.
        problem = kernels.problem() if kernels is not None else ""
        if problem:
            raise ValueError(problem)
        self.kernels = kernels
        self.prefork = prefork  # confined runners kept ready, so a Run does not wait for fork
        # Directories the course's code lives in (the capstone package, helper modules): shown
        # read-only to every run, besides the interpreter's own. Nothing else of the host is.
        self.read_only = tuple(resolved_dirs(read_only))
        # ...held open from now on: every zygote mounts (tier 1) or allows (tier 2) these descriptors, never
        # the path again, so a directory swapped for a link after this check shows nothing new
        self._read_only_fds = [hold_dir(path) for path in self.read_only]
        weakref.finalize(self, close_all, self._read_only_fds)
        # The course's compile cache (``inner/compile_cache.py``): torch.compile's kernels kept across runs,
        # seen only by the learner-side process of a run granted exec, in tier 1.
        self.compile_cache = os.path.abspath(os.fspath(compile_cache)) if compile_cache else None
        self.warm_compile = warm_compile  # import torch.compile's modules in the zygote while it idles
        # A tool's output directory (``inner/output_dir.py``): read-write to runs granted "output-dir"
        # (never a lesson's), e.g. the capstone workspace of `pytorch-tutor capstone --package mine`.
        self.output_dir = os.path.realpath(os.fspath(output_dir)) if output_dir else None
        # As root the zygote hands the directory to the uid runs have; close_sync hands it back.
        self._output_owners = None
        if self.output_dir and os.geteuid() == 0:
            from tutor.sandbox.inner.output_dir import owners  # standard library only

            self._output_owners = owners(self.output_dir)
        self.output_limit = output_limit
        self.start_timeout = start_timeout
        self._fixture_cache = FixtureCache()  # a lab's fixtures, computed once (``lab_fixtures.py``)
        forced = tier if tier is not None else (os.environ.get(TIER_ENV) or None)
        if forced is not None and str(forced) not in TIERS:
            raise ValueError(f"sandbox tier {forced!r}: use one of {', '.join(TIERS)}")
        self.forced_tier: Tier | None = Tier(str(forced)) if forced is not None else None
        self.live: set[int] = set()  # process groups of runs in flight: each is gone before run() returns
        self.on_note = None  # called with a note for the learner (e.g. the zygote was restarted)
        self._zygote: _Zygote | None = None
        self._lock = threading.Lock()
        self._chosen: Tier | None = None
        self._tier_note = ""
        self._closing = False
        self._replaced = ""  # why the last zygote had to be replaced, for the next run's note

    # ---------------------------------------------------------- tier

    def choose_tier(self) -> Tier:
        """The tier runs will use: the probe's choice, or a weaker forced one (a stronger one is not there to have)."""
        if self._chosen is not None:
            return self._chosen
        forced = self.forced_tier
        if forced is not None and forced <= Tier.WEAK:  # nothing to probe: rlimits (or nothing) work everywhere
            self._chosen = forced
            return forced
        report = probe(self.python)
        best = _read_tier(report.get("tier"))
        chosen = best
        if forced == Tier.LANDLOCK and best == Tier.NAMESPACES:
            chosen = Tier.LANDLOCK  # Landlock and seccomp work wherever namespaces do here
            if not (report.get("landlock_abi") and report.get("seccomp_arch")):
                chosen, self._tier_note = Tier.WEAK, "tier 2 was asked for, but this kernel lacks Landlock or seccomp"
        elif forced is not None and forced > best:
            self._tier_note = f"tier {forced} was asked for but is not available here"
        self._chosen = chosen
        return chosen

    @property
    def tier_level(self) -> Tier | None:
        """The tier once known (after :meth:`start` or :meth:`choose_tier`), else None."""
        return self._chosen

    @property
    def tier(self) -> str:
        """A short description of the isolation in force, for the status line and ``doctor``."""
        if self._chosen is None:
            return "starting…"
        return TIER_LABELS[self._chosen]

    @property
    def tier_note(self) -> str:
        return self._tier_note

    @property
    def can_confine_third_party(self) -> bool:
        """Whether lessons from outside the built-in course may run here without an explicit opt-in."""
        return self.choose_tier().confines_third_party

    def third_party_refusal(self) -> str:
        """Why third-party lessons are refused on this machine ("" when they are not)."""
        if self.can_confine_third_party:
            return ""
        why = probe(self.python).get("error") or "neither namespaces nor Landlock with seccomp work here"
        return (f"The sandbox on this machine is {self.tier}: {why}. It cannot confine code from lessons "
                "outside the built-in course, so it refuses them. If you trust these lessons' author, "
                "run again with --trust-lessons.")

    @property
    def layers(self) -> dict[str, str]:
        """Each isolation layer's status, as the running zygote applies it ({} before start)."""
        zygote = self._zygote
        return describe_layers(zygote.info) if zygote is not None else {}

    @property
    def info(self) -> dict:
        zygote = self._zygote
        return dict(zygote.info) if zygote is not None else {}

    # ---------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Probe the tier and start the zygote (the app calls this in the background at launch)."""
        self._closing = False
        await self._ensure_zygote()

    def start_sync(self) -> None:
        asyncio.run(self.start())

    async def compile_warmed(self) -> bool:
        """Wait until the zygote holds torch.compile's modules (``warm_compile``); False when it never will
        (not asked for, another tier, or it stopped). The app leaves those imports to the zygote's idle
        moments; a batch of runs that never lets it idle (an author's check) waits here once instead, or
        every compiling run imports them again (0.6-0.9 s a run, measured on module 23's drills)."""
        zygote = await self._ensure_zygote()
        return await asyncio.wrap_future(zygote.compile_warmed)

    async def close(self) -> None:
        """Stop the zygote and anything it still runs."""
        await asyncio.to_thread(self.close_sync)

    def close_sync(self) -> None:
        self._closing = True
        with self._lock:
            zygote, self._zygote = self._zygote, None
        if zygote is not None:
            zygote.close()
        if self._output_owners is not None:
            from tutor.sandbox.inner.output_dir import hand_back

            hand_back(self.output_dir, *self._output_owners)

    def _new_zygote(self) -> _Zygote:
        with self._lock:
            zygote = self._zygote
            if zygote is None or zygote.dead:
                if zygote is not None:
                    self._replaced = zygote.death or "it stopped"
                    zygote.close(wait=0.5)
                zygote = self._zygote = _Zygote(self.python, self.choose_tier(), self.prefork,
                                                 tuple(zip(self._read_only_fds, self.read_only)),
                                                 self.compile_cache, self.warm_compile, self.output_dir,
                                                 self.kernels)
            return zygote

    async def _ensure_zygote(self) -> _Zygote:
        if self._chosen is None:
            await asyncio.to_thread(self.choose_tier)
        zygote = self._zygote
        try:
            if zygote is None or zygote.dead:  # closing a dead one and spawning may block: not on the loop
                zygote = await asyncio.to_thread(self._new_zygote)
        except OSError as exc:
            raise SandboxUnavailable(f"could not start Python for the sandbox: {exc}") from None
        waiter = asyncio.wrap_future(zygote.ready)
        # When the caller is cancelled (the learner quits before the zygote is ready), the
        # shielded waiter still gets the zygote's "stopped" exception later: retrieve it here,
        # or asyncio prints "Future exception was never retrieved" on the way out.
        waiter.add_done_callback(lambda f: f.cancelled() or f.exception())
        try:
            await asyncio.wait_for(asyncio.shield(waiter), self.start_timeout)
        except asyncio.TimeoutError:
            zygote.close(wait=0)
            raise SandboxUnavailable(f"the sandbox did not get ready in {self.start_timeout:g} s") from None
        return zygote

    def _discard(self, zygote: _Zygote) -> None:
        with self._lock:
            if self._zygote is zygote:
                self._zygote = None
        zygote.close(wait=0.5)
        self._replaced = ""  # the caller reports this one itself

    # ---------------------------------------------------------- runs

    async def run(self, request: RunRequest) -> RunResult:
        """Run ``request``; a judged one runs twice, and its check's verdict comes from the second
        process (``judged.py``: the trust boundary)."""
        cache = self.compile_cache is not None and "exec" in granted(request.needs)
        if not request.judged:
            return await self._run_plain(replace(request, compile_cache=cache))
        return await run_judged(self._run_plain, request, self.read_only, cache, self._fixture_cache, self.release)

    def release(self, rid: int) -> None:
        """End a learner's half that serves calls (``RunResult.serving``) when no judge will call it."""
        zygote = self._zygote
        if zygote is not None and rid:
            try:
                zygote.send({"op": "kill", "id": rid})
            except _ZygoteDied:
                pass  # a zygote that is gone took its runs with it

    async def _run_plain(self, request: RunRequest) -> RunResult:
        note = ""
        for attempt in range(2):
            try:
                zygote = await self._ensure_zygote()
            except SandboxUnavailable as exc:
                return RunResult("failed_to_start", message=f"The sandbox could not start: {exc}.", note=note,
                                 tier=self._chosen or "")
            if self._replaced and not note:
                note = f"The sandbox had stopped ({self._replaced}); it was restarted for this run."
                self._replaced = ""
                if callable(self.on_note):
                    self.on_note(note)
            try:
                result = await self._run_once(zygote, request)
            except _ZygoteDied as exc:
                await asyncio.to_thread(self._discard, zygote)
                if self._closing:
                    return RunResult("crashed", message="The sandbox was closed while this snippet ran.",
                                     tier=zygote.tier)
                if attempt == 0:
                    note = (f"The sandbox had stopped ({exc}); it was restarted and this run was retried "
                            "from the start.")
                    if callable(self.on_note):
                        self.on_note(note)
                    continue
                return RunResult("crashed", message=f"The sandbox stopped twice while running this snippet ({exc}).",
                                 note=note, tier=zygote.tier)
            result.note = note
            result.tier = zygote.tier
            return result
        raise AssertionError("unreachable")

    async def _run_once(self, zygote: _Zygote, request: RunRequest) -> RunResult:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        rid = next(self._ids)
        started = time.monotonic()

        def deliver(header: dict, blobs: list[bytes]) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (header, blobs))
            except RuntimeError:  # that loop is gone: nobody waits for this run any more
                pass

        zygote.handlers[rid] = deliver
        pid: int | None = None
        try:
            zygote.send({"op": "run", "id": rid, "output_limit": self.output_limit}, request.to_json())
            deadline = loop.time() + request.timeout + SLACK + GRACE
            while True:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    if pid:
                        _kill_group(pid)
                    # the zygote did not enforce the deadline itself: do not trust it further
                    await asyncio.to_thread(self._discard, zygote)
                    return RunResult("timeout", message=f"The snippet ran longer than its {request.timeout:g} s "
                                                        "limit and was stopped (with any processes it started).",
                                     seconds=time.monotonic() - started)
                try:
                    header, blobs = await asyncio.wait_for(queue.get(), remaining)
                except asyncio.TimeoutError:
                    continue
                op = header.get("op")
                if op == "died":
                    raise _ZygoteDied(zygote.death or "the zygote stopped")
                if op == "started" and isinstance(header.get("pid"), int) and header["pid"] > 1:
                    pid = header["pid"]
                    self.live.add(pid)
                elif op == "done":
                    result = from_done(header, blobs, request.timeout, self.output_limit)
                    if header.get("serving") is True and request.serve:
                        result.serving = rid  # the judge's half names it (``peer``); or ``release``
                    return result
        except asyncio.CancelledError:
            if pid:
                _kill_group(pid)
            try:
                zygote.send({"op": "kill", "id": rid})
                await asyncio.wait_for(_until_done(queue), 5)
            except (Exception, asyncio.CancelledError):  # noqa: BLE001 - we are being cancelled anyway
                pass
            raise
        finally:
            zygote.handlers.pop(rid, None)
            if pid:
                self.live.discard(pid)

async def _until_done(queue: asyncio.Queue) -> None:
    while True:
        header, _ = await queue.get()
        if header.get("op") in ("done", "died"):
            return


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_tier(text) -> Tier:
    """The probe's tier; anything else (an older or broken probe) reads as the weak tier."""
    try:
        return Tier(str(text))
    except ValueError:
        return Tier.WEAK


# ---------------------------------------------------------------- synchronous use

_default: Sandbox | None = None
_default_lock = threading.Lock()


def default_sandbox() -> Sandbox:
    """One shared sandbox per process for synchronous callers (closed at exit)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Sandbox()
            atexit.register(_default.close_sync)
        return _default


def run_sync(request: RunRequest, sandbox: Sandbox | None = None) -> RunResult:
    """Run one request from synchronous code (the CLI)."""
    return asyncio.run((sandbox or default_sandbox()).run(request))


# ---------------------------------------------------------------- third-party lessons


def is_third_party(paths, builtin: Path) -> bool:
    """Whether any of ``paths`` lies outside the built-in course directory ``builtin``."""
    root = Path(builtin).resolve()
    for path in paths:
        resolved = Path(path).resolve()
        if resolved != root and root not in resolved.parents:
            return True
    return False


def third_party_refusal(paths, builtin: Path, trusted: bool, sandbox: Sandbox | None = None) -> str:
    """The message to show instead of running lessons from ``paths`` ("" when they may run).

    Lessons outside the built-in course run only on a tier that can confine them
    (1 or 2), or when the learner explicitly trusts them (``--trust-lessons``).
    """
    if trusted or not is_third_party(paths, builtin):
        return ""
    return (sandbox or default_sandbox()).third_party_refusal()

