"""The zygote's loop: one thread, one ``select``, never computing after warm-up.

It reads requests from the UI side's socket (frames: ``framing.py``; messages:
``wire.py``), hands each to a pre-forked runner or forks one (``pool.py``), and
answers when the runner's "done" pipe fires or its process tree ends. It also
enforces each run's wall-clock deadline, and in tiers 2 and 3 watches the on-disk
scratch directory's size (``scratch.ScratchUsage``), since no tmpfs caps it there.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import time

from tutor.sandbox import framing
from tutor.sandbox.inner import kernel, scratch, tree
from tutor.sandbox.inner.pool import WATCH_EVERY, Forker, Idle, Run
from tutor.sandbox.inner.start import Started
from tutor.sandbox.wire import (FILE_SIZE, GRANTS, MAX_RESULT, OUTPUT_LIMIT, PROCESSES, SCRATCH_BYTES, SCRATCH_INODES,
                                TOOL_GRANTS, RunRequest, Tier, granted)

UNMEASURED_LIMIT = 10  # tier 2: that many failed measurements in a row stop the run
CACHE_WATCH_EVERY = 0.25  # how often a run's compile cache is measured
MAX_RUNS = 8  # runs in flight before the pool stops refilling
SERVE_CLAIM = 30.0  # how long a learner's half that serves calls waits for its judge (sent at once)


class Zygote:
    def __init__(self, sock: socket.socket, started: Started, pool: int = 2):
        self.sock = sock
        self.started = started
        self.tier = started.setup.tier
        self.torch = started.torch
        self.threads = started.threads
        self.decoder = framing.Decoder()
        self.forker = Forker(started.setup, started.torch, started.scratch_base, started.cgroup_base)
        self.runs: dict[int, Run] = {}  # by pid of A
        self.idle: dict[int, Idle] = {}  # by pid of A, oldest first
        self.pool = pool
        self.prefork_after = 0.0
        self.detached: dict[int, str] = {}  # answered and killed, not yet reaped: pid -> scratch to remove
        self.late = None  # modules still to import while idle (``warm.LateImports``)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)

    @property
    def scratch_base(self) -> str:
        return self.started.scratch_base

    def send(self, header: dict, *blobs: bytes) -> None:
        self.sock.sendall(framing.pack(header, *blobs))

    def serve(self) -> None:
        while True:
            timeout = self._next_timeout()
            done_pipes = {run.done_r: run for run in self.runs.values() if run.done_r >= 0}
            try:
                ready, _, _ = select.select([self.sock, self.wake_r, *done_pipes], [], [], timeout)
            except InterruptedError:
                ready = []
            for fd in ready:
                if fd in done_pipes:
                    self._on_done(done_pipes[fd])
            if self.wake_r in ready:
                try:
                    while os.read(self.wake_r, 4096):
                        pass
                except BlockingIOError:
                    pass
            if self.sock in ready:
                data = self.sock.recv(1 << 20)
                if not data:
                    return
                for header, blobs in self.decoder.feed(data):
                    self.handle(header, blobs)
            self._reap()
            self._tick()

    def _next_timeout(self) -> float | None:
        if self.late is not None and self.late.pending and not self.runs:
            return 0.0
        if len(self.idle) < self.pool and len(self.runs) < MAX_RUNS:
            return max(0.0, self.prefork_after - time.monotonic())
        if not self.runs:
            return None
        now = time.monotonic()
        soonest = 30.0
        for run in self.runs.values():
            if run.exit_status is not None:
                soonest = 0.02
            else:
                soonest = min(soonest, run.deadline - now)
                if self.scratch_base or run.spec.cache or run.spec.writes_output:
                    soonest = min(soonest, run.next_watch - now)
        return max(0.0, soonest)

    def handle(self, msg: dict, blobs: list[bytes]) -> None:
        op = msg.get("op")
        if op == "run":
            rid = msg.get("id")
            try:
                request = RunRequest.from_json(blobs[0])
                limit = msg.get("output_limit", OUTPUT_LIMIT)
                self.start_run(int(rid), request, limit if isinstance(limit, int) and limit > 0 else OUTPUT_LIMIT)
            except (OSError, ValueError, TypeError, KeyError, IndexError) as exc:  # a bad request, fork failed...
                self.send({"op": "done", "id": rid, "setup_error": f"{type(exc).__name__}: {exc}"[:500]})
        elif op == "kill":
            for run in self.runs.values():
                if run.id == msg.get("id"):
                    run.reason = run.reason or "cancelled"
                    _kill_group(run.pid)
        elif op == "shutdown":
            raise SystemExit(0)

    def refusal(self, needs: frozenset) -> str:
        unknown = needs - set(GRANTS) - set(TOOL_GRANTS)
        if unknown:
            return f"the lesson asks for {', '.join(sorted(unknown))}, which the sandbox does not know how to grant"
        if "output-dir" in needs and self.tier == Tier.NAMESPACES and self.started.output_dir is None:
            return "this run asks for an output directory, and this sandbox was started without one"
        if needs and self.tier == Tier.LANDLOCK:
            return (f"this drill needs {', '.join(sorted(needs))}, which the sandbox grants only with namespaces "
                    "(tier 1); this machine refuses them, so it does not run here")
        return ""

    def start_run(self, rid: int, request: RunRequest, output_limit: int) -> None:
        needs = granted(request.needs)
        problem = self.refusal(needs)
        if problem:
            self.send({"op": "done", "id": rid, "refused": problem})
            return
        if self.torch.get_num_threads() != self.threads:  # the research notes' guard
            raise SystemExit("zygote thread count changed")
        # a pre-forked runner is confined already (the default rules) and has no call channel
        ready = not needs and not request.hidden and not request.serve and not request.peer
        if ready and self.idle and self.tier != Tier.NAMESPACES:
            # Tier 2: a pre-forked runner's RLIMIT_NPROC is the uid's task count when it was forked plus
            # the run's budget; if the system has gained so many tasks since that the budget may be all
            # but used up (torch needs a few threads), fork a fresh runner instead (one read of
            # /proc/loadavg decides; the system's total bounds what the uid can have gained).
            pid, idle = next(iter(self.idle.items()))
            if kernel.system_task_count() > idle.tasks + PROCESSES - 16:
                self._retire_idle(pid)
        learner = None
        if ready and self.idle:
            pid, idle = next(iter(self.idle.items()))
            del self.idle[pid]
            self.forker.hand_over(idle, request)
            spec, status_r, done_r = idle.spec, idle.status_r, idle.done_r
        else:
            if self.started.compile_cache and self.forker.uses_cache(needs, request):
                self.started.compile_cache.prune()  # room for this run: it is stopped past the whole budget
            channel, keep, learner = self._channel(request)
            try:
                pid, spec, status_r, _, done_r = self.forker.spawn(needs, request, request.timeout, channel)
            except BaseException:
                for fd in keep:
                    os.close(fd)
                if learner is not None:
                    _kill_group(learner.pid)
                raise
            finally:
                for fd in channel or ():
                    os.close(fd)  # the runner's ends are the runner's alone
        run = self.runs[pid] = Run(rid, pid, spec, status_r, output_limit, request.timeout, done_r)
        if request.serve:
            run.channel = keep
        elif learner is not None:  # it serves for as long as this judge runs, no longer
            run.peer = learner
            learner.deadline = run.deadline + 1.0
        self.send({"op": "started", "id": rid, "pid": pid})

    def _channel(self, request: RunRequest):
        """A judged run's call channel (``remote.py``): (the runner's ends, the zygote's ends, the learner's Run).

        A learner's half that serves gets two new pipes (it reads calls, writes replies) and the
        zygote keeps the other ends for the judge; a judge's half takes those ends from the
        learner's run it names (``peer``: the host's id of that run, answered and serving), once.
        """
        if request.serve:
            calls_r, calls_w = os.pipe2(os.O_CLOEXEC)
            replies_r, replies_w = os.pipe2(os.O_CLOEXEC)
            return (calls_r, replies_w), (calls_w, replies_r), None
        if not request.peer:
            return None, (), None
        learner = next((r for r in self.runs.values() if r.id == request.peer and r.answered and r.channel), None)
        if learner is None:  # gone already (its limit): a channel whose far ends are closed, so that a
            dead_r, far_w = os.pipe2(os.O_CLOEXEC)  # call reads end-of-file at once and says so
            far_r, dead_w = os.pipe2(os.O_CLOEXEC)
            os.close(far_w)
            os.close(far_r)
            return (dead_r, dead_w), (), None
        calls_w, replies_r = learner.channel
        learner.channel = None
        return (replies_r, calls_w), (), learner

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.detached:
                leftover = self.detached.pop(pid)
                if leftover:
                    scratch.remove_tree(leftover)
                continue
            idle = self.idle.pop(pid, None)
            if idle is not None:  # died while waiting (killed from outside, out of memory)
                self.forker.drop_idle(idle)
                continue
            run = self.runs.get(pid)
            if run is not None and run.exit_status is None:
                run.exit_status = status
                run.reaped_at = time.monotonic()

    def _tick(self) -> None:
        now = time.monotonic()
        if self.forker.graveyard:
            self.forker.bury_the_dead()
        if len(self.idle) < self.pool and len(self.runs) < MAX_RUNS and now >= self.prefork_after:
            try:
                idle = self.forker.prefork()  # one per pass, so the loop stays responsive
                self.idle[idle.pid] = idle
            except OSError:
                self.prefork_after = now + 1.0  # out of processes or memory: runs fork on demand meanwhile
        if self.late is not None and self.late.pending and not self.runs and len(self.idle) >= self.pool:
            self.late.step()  # one module per pass: a request waits for one import at most
            if not self.late.pending:
                for pid in list(self.idle):  # forked before the imports: the next runners get them
                    self._retire_idle(pid)
                self.send({"op": "warmed"})
        for run in list(self.runs.values()):
            if run.exit_status is not None:
                if _group_gone(run.pid) or now - run.reaped_at > 2.0:
                    self.finish(run)
                else:
                    _kill_group(run.pid)
                continue
            if now >= run.deadline and not run.reason:
                run.reason = "timeout"
                _kill_group(run.pid)
            elif run.spec.cache and now >= run.next_watch:
                run.next_watch = now + CACHE_WATCH_EVERY
                if self.started.compile_cache.over_budget():
                    run.reason = "compile cache"
                    _kill_group(run.pid)
            elif run.spec.writes_output and now >= run.next_watch:
                run.next_watch = now + CACHE_WATCH_EVERY
                if self.started.output_dir.over_budget():
                    run.reason = "output directory"
                    _kill_group(run.pid)
            elif self.scratch_base and now >= run.next_watch:
                run.next_watch = now + WATCH_EVERY
                verdict = over_quota(run.spec.scratch, run.pid)
                run.unmeasured = run.unmeasured + 1 if verdict is None else 0
                # A run whose scratch cannot be measured for a whole second (a tree it keeps moving
                # under the walk) is treated as over its quota: what cannot be counted is not allowed.
                if verdict or run.unmeasured >= UNMEASURED_LIMIT:
                    run.reason = "scratch"
                    _kill_group(run.pid)

    def _on_done(self, run: Run) -> None:
        try:
            data = os.read(run.done_r, 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        os.close(run.done_r)
        run.done_r = -1
        if data.startswith(b"D") and run.exit_status is None and not run.reason:
            # The result is complete: answer now, and let the kernel tear the tree down meanwhile.
            _kill_group(run.pid)
            self.finish(run, early=True)
        elif data.startswith(b"S") and run.channel and run.exit_status is None and not run.reason:
            # A learner's half, its result complete, stays to answer a judge's calls: answer now,
            # and keep it (until its judge ends, the host lets it go, or its deadline passes).
            self.answer(run, ("status", 0))
            run.answered = True
            run.deadline = max(run.deadline, time.monotonic() + SERVE_CLAIM)

    def finish(self, run: Run, early: bool = False) -> None:
        del self.runs[run.pid]
        if run.done_r >= 0:
            os.close(run.done_r)
            run.done_r = -1
        for fd in run.channel or ():
            os.close(fd)
        run.channel = None
        if run.peer is not None and self.runs.get(run.peer.pid) is run.peer:
            _kill_group(run.peer.pid)  # the judge is done: its learner's half serves no one now
        status = tree.read_status(run.status_r) if not early else ("status", 0)
        os.close(run.status_r)
        if run.spec.cache and (run.reason or status != ("status", 0)):
            # Stopped or killed mid-compile, it may have left a half-written kernel (a 0-byte .so that
            # every later compile of that graph would load and fail on): drop what it wrote.
            self.started.compile_cache.discard_since(run.started_wall)
        if early:
            self.detached[run.pid] = run.spec.scratch if self.scratch_base else ""
        elif self.scratch_base:
            scratch.remove_tree(run.spec.scratch)  # before the answer: a finished run has left nothing behind
        self.forker.bury_cgroup(run.spec.cgroup)
        if not run.answered:
            self.answer(run, status)

    def answer(self, run: Run, status: tuple[str, object]) -> None:
        """Send the host the run's result and output (once: a serving run is answered before it ends)."""
        kind, value = status
        result, result_size = _read_memfd(run.spec.result, MAX_RESULT + 1)
        output, output_size = _read_memfd(run.spec.output, run.output_limit)
        os.close(run.spec.result)
        os.close(run.spec.output)
        header = {"op": "done", "id": run.id, "pid": run.pid, "seconds": round(time.monotonic() - run.started, 4),
                  "reason": run.reason, "result_size": result_size, "output_size": output_size,
                  "setup_error": value if kind == "error" else "", "serving": bool(run.channel)}
        header.update(_describe_status(value if kind == "status" else run.exit_status))
        self.send(header, result, output)

    def _retire_idle(self, pid: int) -> None:
        """End a pre-forked runner that will not be used; a fresh one is forked in its place."""
        idle = self.idle.pop(pid)
        _kill_group(pid)
        self.detached[pid] = ""
        self.forker.drop_idle(idle)

    def shutdown(self) -> None:
        for idle in self.idle.values():
            _kill_group(idle.pid)
            self.runs[idle.pid] = Run(-1, idle.pid, idle.spec, idle.status_r, 0, 0)
        self.idle.clear()
        for run in self.runs.values():
            _kill_group(run.pid)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:  # reap every descendant (we are their subreaper), then go
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                time.sleep(0.005)
        self.forker.graveyard += [run.spec.cgroup for run in self.runs.values() if run.spec.cgroup]
        self.forker.bury_the_dead()
        self.runs.clear()
        self.detached.clear()
        if self.scratch_base:
            scratch.remove_tree(self.scratch_base)


def over_quota(path: str, pid: int) -> bool | None:
    """Tier 2: does the run hold more than its scratch budget on disk? None when it could not be measured.

    Counts the scratch tree (iteratively, whatever modes or depth the snippet gave it) and the
    files the runner keeps open or mapped after unlinking them: see ``scratch.ScratchUsage``.
    As the owner, the walk gives a directory the snippet made unreadable its owner's rwx bits
    back (a snippet that revokes its own access to its own scratch directory loses that game);
    the tutor running as root reads it without changing anything.
    """
    usage = scratch.ScratchUsage(path, SCRATCH_BYTES, SCRATCH_INODES, FILE_SIZE)
    try:
        usage.measure(pid)
    except scratch.OverQuota:
        return True
    except OSError:
        return None
    return False


def _describe_status(status: int | None) -> dict:
    if status is None:
        return {"exit": None, "signal": None}
    if os.WIFSIGNALED(status):
        return {"exit": None, "signal": os.WTERMSIG(status)}
    if os.WIFEXITED(status):
        return {"exit": os.WEXITSTATUS(status), "signal": None}
    return {"exit": None, "signal": None}


def _read_memfd(fd: int, limit: int) -> tuple[bytes, int]:
    try:
        size = os.fstat(fd).st_size
        return os.pread(fd, min(size, limit), 0), size
    except OSError:
        return b"", 0


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
