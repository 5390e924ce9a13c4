"""The parent side of the sandbox: a warm zygote, one confined child per run.

No torch and no Textual here. :class:`Sandbox` starts ``zygote.py`` as its own
program with a minimal environment, talks to it over a socketpair with
length-prefixed JSON frames, and turns what comes back into a
:class:`RunResult`. It never trusts the child: result bytes are parsed here
with caps on size and depth and a schema check (``protocol.py``), output is
made inert, and grading happens in the UI process (``tutor.grading``), never
from a verdict the child reports.

Trust boundary: the learner's code (a repair, a lab) never runs in the process
whose check decides its verdict. A judged request runs twice: the learner's
process exports what the code computed as plain data (``exchange.py``), and a
fresh process runs the setup and the check on that data (``Sandbox.run``).
Prediction drills need no second process: their code is the author's, and the
learner's answers are judged here, in the parent, from the observed values.

The zygote is restarted when it dies, and a run it was doing is retried once
(``RunResult.note`` says so). A reader thread owns the socket, so one
``Sandbox`` works from any event loop (the app's, or ``asyncio.run`` in the CLI)
and from several at once.

Isolation tiers (chosen by ``probe.py`` once per process, or forced with
``Sandbox(tier=...)`` / ``$PYTORCH_TUTOR_SANDBOX_TIER``):

* ``"1"``: user, pid, network, ipc, uts and mount namespaces, a private
  read-only root, a size-capped scratch tmpfs, rlimits, Landlock, seccomp;
* ``"2"``: no namespaces: rlimits, Landlock, seccomp (no sockets, no new processes);
* ``"3"``: rlimits and a separate session only: built-in lessons only;
* ``"none"``: no confinement at all, for benchmarks.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import itertools
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from tutor.safe_text import inert
from tutor.sandbox import framing
from tutor.sandbox.exchange import MAX_EXPORT  # standard library only: no torch in this process
from tutor.sandbox.protocol import BadResult, Observation, RunRequest, parse_observation

HERE = Path(__file__).resolve().parent
ZYGOTE_SCRIPT = HERE / "zygote.py"
PROBE_SCRIPT = HERE / "probe.py"
OUTPUT_LIMIT = 64 * 1024
MAX_EXPORT_BYTES = MAX_EXPORT  # a judged run's exported values, capped where they are written too
START_TIMEOUT = 90.0  # importing torch cold can take a while on a loaded machine
SLACK = 1.0  # the zygote's own allowance past a snippet's limit (see zygote.SLACK)
GRACE = 10.0  # past that, the UI stops waiting for the zygote and treats it as wedged
TIER_ENV = "PYTORCH_TUTOR_SANDBOX_TIER"
TIERS = ("1", "2", "3", "none")
TIER_LABELS = {
    "1": "tier 1 (namespaces, Landlock, seccomp)",
    "2": "tier 2 (no namespaces: Landlock, seccomp)",
    "3": "tier 3 (weak: built-in lessons only)",
    "none": "no isolation (benchmarks only)",
}


@dataclass
class RunResult:
    """How a run ended; ``observation`` is set only when ``status == "ok"``."""

    status: str  # ok | timeout | crashed | no_result | bad_result | failed_to_start | refused
    observation: Observation | None = None
    output: str = ""
    output_truncated: int = 0  # bytes of output not kept
    seconds: float = 0.0
    message: str = ""
    exit_code: int | None = None
    note: str = ""  # something the learner should know although the run went fine (a restarted sandbox)
    tier: str = ""
    exports: bytes = b""  # a judged run's learner half: its exported values (opaque here, read by the judge)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class SandboxUnavailable(RuntimeError):
    pass


class _ZygoteDied(Exception):
    pass


def zygote_environment() -> dict[str, str]:
    """Everything the zygote's environment holds: no secrets, nothing from the learner's shell."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": "/nonexistent",
        "OPENBLAS_NUM_THREADS": "1",
        "CUDA_VISIBLE_DEVICES": "",
    }


# ---------------------------------------------------------------- the probe

_probe_cache: dict[str, dict] = {}
_probe_lock = threading.Lock()


def probe(python: str | None = None) -> dict:
    """What ``probe.py`` finds on this machine (run once per process and interpreter, then cached)."""
    python = python or sys.executable
    with _probe_lock:
        if python not in _probe_cache:
            _probe_cache[python] = _run_probe(python)
        return _probe_cache[python]


def _run_probe(python: str) -> dict:
    try:
        done = subprocess.run([python, "-I", str(PROBE_SCRIPT)], env=zygote_environment(), cwd="/",
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        report = json.loads(done.stdout[-65536:] or b"null")
    except (OSError, subprocess.TimeoutExpired, ValueError, RecursionError) as exc:
        return {"tier": "3", "error": f"the probe failed: {exc}"}
    if not isinstance(report, dict) or report.get("tier") not in ("1", "2", "3"):
        return {"tier": "3", "error": "the probe said nothing usable: "
                                      + done.stderr.decode("utf-8", "replace")[-300:]}
    return report


# ---------------------------------------------------------------- one zygote process


class _Zygote:
    def __init__(self, python: str, tier: str, pool: int):
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.proc = subprocess.Popen(
                [python, "-I", str(ZYGOTE_SCRIPT), "--tier", tier, "--fd", str(child.fileno()), "--pool", str(pool)],
                env=zygote_environment(), cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, pass_fds=(child.fileno(),), start_new_session=True)
        except OSError:
            parent.close()
            raise
        finally:
            child.close()
        self.sock = parent
        self.tier = tier
        self.ready: concurrent.futures.Future = concurrent.futures.Future()
        self.info: dict = {}
        self.handlers: dict[int, object] = {}
        self.dead = False
        self.death = ""
        self.closing = False
        self.stderr_tail = bytearray()
        self.send_lock = threading.Lock()
        self.thread = threading.Thread(target=self._read_loop, name="sandbox-zygote", daemon=True)
        self.thread.start()

    def _read_loop(self) -> None:
        decoder = framing.Decoder()
        stderr = self.proc.stderr
        watched = [self.sock, stderr]
        try:
            while not self.closing:
                ready, _, _ = select.select(watched, [], [], 0.5)
                if stderr in ready:
                    data = os.read(stderr.fileno(), 65536)
                    if data:
                        self.stderr_tail = (self.stderr_tail + data)[-8192:]
                    else:
                        watched.remove(stderr)
                if self.sock in ready:
                    data = self.sock.recv(1 << 20)
                    if not data:
                        self.death = "it closed its connection"
                        break
                    for header, blobs in decoder.feed(data):
                        self._dispatch(header, blobs)
        except framing.FrameError as exc:
            self.death = f"it sent a malformed frame ({exc})"
        except (OSError, ValueError) as exc:
            self.death = self.death or f"its connection failed ({exc})"
        finally:
            self._died()

    def _dispatch(self, header: dict, blobs: list[bytes]) -> None:
        op = header.get("op")
        if op == "ready":
            self.info = header
            if not self.ready.done():
                self.ready.set_result(header)
        elif op == "error":
            self.death = f"it could not start: {str(header.get('message', ''))[:500]}"
            if not self.ready.done():
                self.ready.set_exception(SandboxUnavailable(self.death))
        else:
            handler = self.handlers.get(header.get("id"))
            if handler is not None:
                handler(header, blobs)

    def _died(self) -> None:
        self.dead = True
        if not self.closing:
            code = self.proc.poll()
            if code is not None and not self.death.startswith("it could not"):
                self.death = f"{self.death}; exit status {code}" if self.death else f"exit status {code}"
            tail = self.stderr_tail.decode("utf-8", "replace").strip().splitlines()[-1:]
            if tail:
                self.death += f": {inert(tail[0])[:200]}"
        if not self.ready.done():
            self.ready.set_exception(SandboxUnavailable(self.death or "the zygote stopped"))
        for handler in list(self.handlers.values()):
            handler({"op": "died"}, [])

    def send(self, header: dict) -> None:
        frame = framing.pack(header)
        with self.send_lock:
            if self.dead:
                raise _ZygoteDied(self.death or "the zygote stopped")
            try:
                self.sock.sendall(frame)
            except OSError as exc:
                raise _ZygoteDied(f"its connection failed ({exc})") from None

    def close(self, wait: float = 3.0) -> None:
        if self.closing:
            return
        try:
            self.send({"op": "shutdown"})
        except _ZygoteDied:
            pass
        self.closing = True
        try:
            self.proc.wait(wait)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # its children die with it (parent-death signal)
            self.proc.wait()
        try:
            self.sock.close()
        except OSError:
            pass
        if threading.current_thread() is not self.thread:
            self.thread.join(2)
        if self.proc.stderr:
            self.proc.stderr.close()
        base = self.info.get("scratch_base")
        if (isinstance(base, str) and base.startswith("/") and os.path.normpath(base) == base
                and os.path.basename(base).startswith("pytorch-tutor-sandbox-")):
            from tutor.sandbox.confine import remove_tree

            # The zygote removes it itself unless it was killed. Iterative and as the owner: the
            # snippet may have left a tree deeper than the recursion limit, or unreadable modes.
            remove_tree(base)


# ---------------------------------------------------------------- the public object


class Sandbox:
    """Runs snippets in confined children of a warm zygote."""

    _ids = itertools.count(1)

    def __init__(self, python: str | None = None, output_limit: int = OUTPUT_LIMIT,
                 start_timeout: float = START_TIMEOUT, tier: str | None = None, prefork: int = 2):
        self.python = python or sys.executable
        self.prefork = prefork  # confined runners kept ready, so a Run does not wait for fork
        self.output_limit = output_limit
        self.start_timeout = start_timeout
        forced = tier if tier is not None else (os.environ.get(TIER_ENV) or None)
        if forced is not None and str(forced) not in TIERS:
            raise ValueError(f"sandbox tier {forced!r}: use one of {', '.join(TIERS)}")
        self.forced_tier = str(forced) if forced is not None else None
        self.live: set[int] = set()  # process groups of runs in flight: each is gone before run() returns
        self.on_note = None  # called with a note for the learner (e.g. the zygote was restarted)
        self.restarts = 0
        self._zygote: _Zygote | None = None
        self._lock = threading.Lock()
        self._chosen: str | None = None
        self._tier_note = ""
        self._closing = False
        self._replaced = ""  # why the last zygote had to be replaced, for the next run's note

    # ---------------------------------------------------------- tier

    def choose_tier(self) -> str:
        """The tier runs will use: the probe's choice, or a forced one the machine supports."""
        if self._chosen is not None:
            return self._chosen
        if self.forced_tier in ("none", "3"):
            self._chosen = self.forced_tier
            return self._chosen
        report = probe(self.python)
        best = report.get("tier", "3")
        chosen = best
        if self.forced_tier == "2" and best == "1":
            chosen = "2"  # Landlock and seccomp work wherever namespaces do here
            if not (report.get("landlock_abi") and report.get("seccomp_arch")):
                chosen, self._tier_note = "3", "tier 2 was asked for, but this kernel lacks Landlock or seccomp"
        elif self.forced_tier is not None and self.forced_tier != best and self.forced_tier < best:
            self._tier_note = f"tier {self.forced_tier} was asked for but is not available here"
        self._chosen = chosen
        return chosen

    @property
    def tier_level(self) -> str | None:
        """ "1", "2", "3" or "none" once known (after :meth:`start` or :meth:`choose_tier`), else None."""
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
        return self.choose_tier() in ("1", "2")

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
        layers = zygote.info.get("layers") if zygote is not None else None
        return dict(layers) if isinstance(layers, dict) else {}

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

    async def close(self) -> None:
        """Stop the zygote and anything it still runs."""
        await asyncio.to_thread(self.close_sync)

    def close_sync(self) -> None:
        self._closing = True
        with self._lock:
            zygote, self._zygote = self._zygote, None
        if zygote is not None:
            zygote.close()

    def _new_zygote(self) -> _Zygote:
        with self._lock:
            zygote = self._zygote
            if zygote is None or zygote.dead:
                if zygote is not None:
                    self._replaced = zygote.death or "it stopped"
                    zygote.close(wait=0.5)
                    self.restarts += 1
                zygote = self._zygote = _Zygote(self.python, self.choose_tier(), self.prefork)
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
                self.restarts += 1
        zygote.close(wait=0.5)
        self._replaced = ""  # the caller reports this one itself

    # ---------------------------------------------------------- runs

    async def run(self, request: RunRequest) -> RunResult:
        """Run ``request``; a judged one runs twice, and its check's verdict comes from the second process.

        The trust boundary: a repair's or a lab's code is the learner's, so it may patch
        anything in its own process, the check included. Its process therefore runs the
        setup, the code and the probe, and exports what they bound as data; a fresh
        process from the zygote runs the setup again, takes that data, and runs the
        check. The verdict never comes from a process the judged code ran in.
        """
        if not request.judged:
            return await self._run_plain(request)
        probes = tuple(replace(t, check="") for t in request.tests)  # the learner's half never sees a check
        learner = await self._run_plain(replace(request, judged=False, export=True, check="", tests=probes,
                                                rules=None, sources=(), judge_modules=()))
        obs = learner.observation
        if not learner.ok or obs is None:
            return learner
        obs.check, obs.check_message = "skipped", ""  # whatever the learner's process said about it
        obs.tests, obs.fingerprint = [], ""
        if not request.check.strip() and not request.tests and request.rules is None:
            return learner
        if obs.error is not None and obs.error.phase not in ("code", "probe"):
            return learner
        if obs.error is not None and obs.error.phase == "probe":  # the author's probe failed on this code
            obs.check, obs.check_message = "error", f"the probe raised {obs.error.type}: {obs.error.message}"
            return learner
        if len(learner.exports) > MAX_EXPORT_BYTES:
            obs.check, obs.check_message = "error", "the code's results are too large to be judged"
            return learner
        code_error = obs.error if obs.error is not None and obs.error.phase == "code" else None
        judge = await self._run_plain(RunRequest(
            code="", setup=request.setup, check=request.check, imports=learner.exports.decode("utf-8", "replace"),
            timeout=request.timeout, needs=request.needs, modules=request.judge_modules, tests=request.tests,
            rules=request.rules, sources=request.sources,
            probe_errors={name: asdict(info) for name, info in obs.probe_errors.items()},
            learner_error=asdict(code_error) if code_error else None))
        verdict = judge.observation
        if not judge.ok or verdict is None:
            obs.check, obs.check_message = "error", f"the check could not run: {judge.message}"
        elif verdict.error is not None:
            obs.check, obs.check_message = "error", f"the check could not run: {verdict.error.message}"
        else:
            obs.check, obs.check_message = verdict.check, verdict.check_message
            obs.tests, obs.fingerprint = verdict.tests, verdict.fingerprint
            obs.fence = obs.fence + [f"check: {f}" for f in verdict.fence]
        learner.seconds += judge.seconds
        learner.exports = b""
        return learner

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
            payload = asdict(request)
            del payload["judged"]  # the parent's business: the inner side only sees the halves
            del payload["judge_modules"]  # likewise: the judge's half is sent them as its `modules`
            zygote.send({"op": "run", "id": rid, "request": payload, "output_limit": self.output_limit})
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
                    return self._result(header, blobs, request)
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

    def _result(self, header: dict, blobs: list[bytes], request: RunRequest) -> RunResult:
        raw = blobs[0] if len(blobs) > 0 else b""
        output_raw = blobs[1][:self.output_limit] if len(blobs) > 1 else b""
        output_size = header.get("output_size")
        dropped = max(0, output_size - len(output_raw)) if isinstance(output_size, int) else 0
        seconds = header.get("seconds") if isinstance(header.get("seconds"), (int, float)) else 0.0
        code, sig = header.get("exit"), header.get("signal")
        exit_code = code if isinstance(code, int) else (-sig if isinstance(sig, int) else None)
        refused = header.get("refused")
        if refused:
            result = RunResult("refused", message=f"The sandbox refused this run: {inert(str(refused))[:500]}.")
        elif header.get("setup_error"):
            result = RunResult("failed_to_start", message="The sandbox could not confine this run: "
                                                          f"{inert(str(header['setup_error']))[:500]}.")
        elif header.get("reason") == "timeout":
            result = RunResult("timeout", message=f"The snippet ran longer than its {request.timeout:g} s limit and "
                                                  "was stopped (with any processes it started).")
        elif header.get("reason") == "scratch":
            result = RunResult("crashed", message="The snippet wrote more than the scratch directory's limit "
                                                  "(64 MiB or 4096 files) and was stopped.")
        elif header.get("reason") == "cancelled":
            result = RunResult("crashed", message="The run was cancelled.")
        else:
            result = self._interpret(exit_code, raw)
        result.seconds = float(seconds)
        result.output = inert(output_raw.decode("utf-8", "replace"))
        result.output_truncated = dropped
        if result.exit_code is None:
            result.exit_code = exit_code
        return result

    @staticmethod
    def _interpret(returncode: int | None, raw: bytes) -> RunResult:
        if not raw:
            if returncode is not None and returncode < 0:
                name = _signal_name(-returncode)
                why = {"SIGXCPU": " (its CPU-time limit)", "SIGKILL": " (a hard limit, or the system ran out of "
                                                                       "memory)",
                       "SIGSYS": ": it made a system call that the sandbox forbids, and the sandbox refused it "
                                 "(the output names the call)"}.get(name, "")
                return RunResult("crashed", message=f"The snippet's process was killed by {name}{why} "
                                                     "before it could be observed.", exit_code=returncode)
            return RunResult("no_result", message="The snippet ended its process before the tutor could observe "
                                                   f"it (exit code {returncode}).", exit_code=returncode)
        line, _, exports = raw.partition(b"\n")
        try:
            observation = parse_observation(line)
        except BadResult as exc:
            return RunResult("bad_result", message=f"The snippet's result could not be read: {exc}.",
                             exit_code=returncode)
        return RunResult("ok", observation=observation, exit_code=returncode, exports=exports)


async def _until_done(queue: asyncio.Queue) -> None:
    while True:
        header, _ = await queue.get()
        if header.get("op") in ("done", "died"):
            return


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


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
