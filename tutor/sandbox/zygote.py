"""The warm zygote: imports torch once, then forks one confined child per snippet.

Started by the UI process (``client.py``) as its own program, with a minimal
environment (no secrets: ``/proc/self/environ`` of every child shows only
that) and ``python -I``; it imports only its sibling modules ``child``,
``confine``, ``exchange``, ``framing`` and ``jail``, never the rest of ``tutor`` (no lessons,
no answer keys, no profile). It talks to the UI over one socket with
length-prefixed JSON frames (``framing.py``) and runs a single-threaded
``select`` loop: it never computes after warm-up.

Measured pitfalls this follows (research notes, section 2):

* warm up with ``torch.set_num_threads(1)``, then restore the thread count
  without running an op: a zygote that ran a 2-thread OpenMP region deadlocks
  its children (libgomp's pool does not survive ``fork``);
* ``OPENBLAS_NUM_THREADS=1`` in its environment, so numpy's OpenBLAS starts no
  thread (a second thread also makes ``unshare(CLONE_NEWUSER)`` fail);
* ``gc.freeze()`` last, so children do not copy the heap when the collector
  touches it (40 MB → 2 MB of private memory per child).
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import socket
import stat
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import child  # noqa: E402
import confine  # noqa: E402
import exchange  # noqa: E402
import framing  # noqa: E402
import jail  # noqa: E402

del sys.path[0]

MAX_RESULT = (1 << 20) + exchange.MAX_EXPORT + 4096  # the observation line, then a judged run's exports
MAX_TIMEOUT = 600.0  # a pre-forked runner's CPU limit until its request lowers it
SLACK = 1.0  # seconds past a snippet's limit for confinement, describing values and writing the result
WATCH_EVERY = 0.1  # tier 2: how often the on-disk scratch directory is measured
UNMEASURED_LIMIT = 10  # tier 2: that many failed measurements in a row stop the run


class Run:
    def __init__(self, rid: int, pid: int, spec: jail.RunSpec, status_r: int, output_limit: int, timeout: float,
                 done_r: int = -1):
        self.id = rid
        self.done_r = done_r
        self.pid = pid
        self.spec = spec
        self.status_r = status_r
        self.output_limit = output_limit
        self.started = time.monotonic()
        self.deadline = self.started + timeout + SLACK
        self.timeout = timeout
        self.reason = ""  # timeout | cancelled | scratch
        self.exit_status: int | None = None
        self.reaped_at = 0.0
        self.next_watch = self.started + WATCH_EVERY
        self.unmeasured = 0  # tier 2: watches in a row that could not measure the scratch directory


class Idle:
    """A pre-forked, fully confined runner waiting on its ``go`` pipe for a request."""

    def __init__(self, pid: int, spec: jail.RunSpec, status_r: int, go_w: int, done_r: int, tasks: int = 0):
        self.pid = pid
        self.done_r = done_r
        self.spec = spec
        self.status_r = status_r
        self.go_w = go_w
        self.tasks = tasks  # tier 2: the system's task count when it was forked (its RLIMIT_NPROC is fixed then)


class Zygote:
    def __init__(self, sock: socket.socket, tier: str, pool: int = 2):
        self.sock = sock
        self.tier = tier
        self.decoder = framing.Decoder()
        self.runs: dict[int, Run] = {}  # by pid of A
        self.idle: dict[int, Idle] = {}  # by pid of A, oldest first
        self.pool = pool
        self.prefork_after = 0.0
        self.spawned = 0
        self.detached: dict[int, str] = {}  # answered and killed, not yet reaped: pid -> scratch to remove
        self.me = os.getpid()
        self.root = os.geteuid() == 0
        self.uid = confine.NOBODY if self.root else os.getuid()
        self.gid = confine.NOBODY if self.root else os.getgid()
        self.devnull = os.open(os.devnull, os.O_RDWR)
        self.filters: dict[tuple, bytes | None] = {}
        self.scratch_base = ""
        self.torch = None
        self.cgroup_base: str | None = None  # a delegated cgroup v2 subtree: per-run memory and task caps
        self.cgroup_note = ""  # how it was had, or why there is none (for doctor)
        self.cgroup_graveyard: list[str] = []  # run cgroups to remove once their last process is gone

    # ------------------------------------------------------------ start-up

    def prepare(self) -> dict:
        started = time.monotonic()
        os.umask(0o077)
        os.chdir("/")
        confine.set_child_subreaper()
        if self.tier in ("1", "2"):
            self.cgroup_base, self.cgroup_note = confine.sandbox_cgroup()  # before torch: it may fork busctl
            if self.cgroup_base:
                problem = _try_run_cgroup(self.cgroup_base)
                if problem:  # never let a half-working cgroup fail every run: go without, and say why
                    self.cgroup_base, self.cgroup_note = None, f"{self.cgroup_note} is unusable: {problem}"
        abi = confine.landlock_abi() if self.tier != "none" else 0
        seccomp = confine.seccomp_supported() and self.tier != "none"
        path_fds: list[int] = []
        python_ro: list[str] = []
        plan = None
        if self.tier == "1":
            plan = confine.build_plan()
        else:
            path_fds, python_ro = self._reachable_python()
            self.scratch_base = tempfile.mkdtemp(prefix="pytorch-tutor-sandbox-")
            os.chmod(self.scratch_base, 0o711)
        self.setup = jail.Setup(tier=self.tier, uid=self.uid, gid=self.gid, root=self.root, landlock_abi=abi,
                                seccomp=seccomp, plan=plan, base=self._mount_base(), path_fds=path_fds,
                                python_ro=python_ro)
        self._warm_torch()
        if path_fds:
            self._cache_unreachable_sources()
        sys.stdout.reconfigure(line_buffering=True)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        self.wake_w = wake_w
        gc.collect()
        gc.freeze()
        return {
            "op": "ready", "pid": self.me, "tier": self.tier, "uid": self.uid, "root": self.root,
            "landlock_abi": abi, "seccomp": seccomp, "torch": self.torch.__version__,
            "threads": self.threads, "python": sys.executable, "scratch_base": self.scratch_base,
            "plan": plan.as_dict() if plan else None, "path_fds": len(path_fds),
            "warm_seconds": round(time.monotonic() - started, 3), "layers": self.layers(),
            "cgroup": bool(self.cgroup_base),
        }

    @staticmethod
    def _mount_base() -> str:
        for base in ("/tmp", "/mnt", "/var/tmp", "/media"):
            if os.path.isdir(base) and not os.path.islink(base):
                return base
        return "/tmp"

    def _reachable_python(self) -> tuple[list[int], list[str]]:
        """Tiers 2 and 3 as root: make Python directories the sandbox uid cannot traverse reachable.

        The zygote (still root) opens an O_PATH descriptor on the first directory
        below the unreachable one; the children keep it at a fixed number, and
        ``sys.path`` names such directories through ``/proc/self/fd/N/…``, which
        needs no search permission on the parents. Landlock then allows reading
        exactly there.
        """
        fds: list[int] = []
        anchors: dict[str, str] = {}
        ro: list[str] = []

        def reach(path: str) -> str:
            if not self.root or _traversable(path, self.uid, self.gid):
                return path
            anchor = _reachable_anchor(path, self.uid, self.gid)
            if anchor is None:
                return path
            if anchor not in anchors:
                fd = os.open(anchor, os.O_PATH | os.O_DIRECTORY)
                number = jail.PATH_FD_BASE + len(fds)
                os.dup2(fd, number, inheritable=True)
                os.close(fd)
                fds.append(number)
                anchors[anchor] = f"/proc/self/fd/{number}"
            return anchors[anchor] + path[len(anchor):]

        for i, entry in enumerate(sys.path):
            if entry and os.path.isdir(entry):
                sys.path[i] = reach(entry)
        if fds:  # packages imported at start-up (encodings, importlib, ...) load submodules lazily
            for module in list(sys.modules.values()):
                search = getattr(module, "__path__", None)
                if isinstance(search, list):
                    search[:] = [reach(p) if isinstance(p, str) and os.path.isdir(p) else p for p in search]
        paths = confine.python_paths()
        for path in confine.without(paths, confine.hidden_dirs(paths)):  # never the tutor's own course
            ro.append(reach(path))
        return fds, sorted(set(ro))

    def _cache_unreachable_sources(self) -> None:
        """Tiers 2 and 3 as root: modules imported before ``sys.path`` was rewritten keep real paths the
        sandbox uid cannot open, so ``inspect.getsource`` (which torch.func and dynamo use) and
        tracebacks would fail on them. Their sources go into ``linecache`` here, marked as loader-provided
        (mtime None) so that ``linecache.checkcache`` never drops them in a child."""
        import linecache

        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if not isinstance(filename, str) or not filename.endswith(".py") or filename in linecache.cache:
                continue
            if _traversable(os.path.dirname(filename), self.uid, self.gid):
                continue
            try:
                with open(filename, encoding="utf-8") as f:
                    lines = f.readlines()
            except (OSError, UnicodeDecodeError):
                continue
            linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)

    def _warm_torch(self) -> None:
        import numpy  # noqa: F401
        import numpy.random  # noqa: F401 - the child seeds it on every run
        import torch
        import torch.nn  # noqa: F401
        import torch.nn.functional as F
        import torch.optim  # noqa: F401
        import torch.utils.data  # noqa: F401

        for name in ("json", "math", "random", "collections", "itertools", "functools", "dataclasses",
                     "typing", "warnings", "socket", "subprocess", "threading", "ctypes", "copy", "pickle", "io"):
            __import__(name)
        self.threads = torch.get_num_threads()
        torch.set_num_threads(1)  # never run an op with 2 threads here (libgomp + fork deadlock)
        x = torch.randn(32, 32, requires_grad=True)
        loss = (x @ x).tanh().sum() + F.conv2d(x.view(1, 1, 32, 32), torch.ones(1, 1, 3, 3)).sum()
        loss.backward()
        # Building the first optimizer imports torch._dynamo (about 3 s): pay it here, once,
        # instead of in every drill that trains.
        torch.optim.AdamW([x], lr=1e-3).step()
        torch.manual_seed(0)
        torch.set_num_threads(self.threads)  # no op may run after this line
        self.torch = torch

    def layers(self) -> dict[str, str]:
        s = self.setup
        on = "on"
        out: dict[str, str] = {}
        if s.tier == "1":
            out["user namespace"] = on
            out["pid namespace"] = "on (runner is pid 2, fresh /proc)"
            out["network namespace"] = "on (no interfaces up)"
            out["ipc, uts namespaces"] = on
            out["mount namespace"] = ("on (private read-only root: system, Python and venv; "
                                      f"$HOME, /tmp and host paths hidden; scratch tmpfs "
                                      f"{jail.SCRATCH_BYTES >> 20} MiB / {jail.SCRATCH_INODES} files as cwd)")
        else:
            reason = "not in this tier"
            for name in ("user namespace", "pid namespace", "network namespace", "ipc, uts namespaces",
                         "mount namespace"):
                out[name] = f"off ({reason})"
            out["scratch"] = (f"host directory under {self.scratch_base}, watched: "
                              f"{jail.SCRATCH_BYTES >> 20} MiB / {jail.SCRATCH_INODES} files")
        if s.landlock_abi:
            parts = ["filesystem allow-list"]
            if s.landlock_abi >= 4:
                parts.append("TCP denied")
            if s.landlock_abi >= 6:
                parts.append("signals and abstract sockets scoped")
            out["landlock"] = f"on (ABI {s.landlock_abi}: {', '.join(parts)})"
        else:
            out["landlock"] = "off (" + ("not used" if s.tier == "none" else "kernel has no Landlock") + ")"
        if s.seccomp:
            if s.tier == "1":
                rest = ("UNIX sockets only, threads only and no exec unless a lesson declares "
                        "processes, exec or loopback")
            else:
                rest = "no sockets, threads only, no exec (lessons that declare more are refused)"
            out["seccomp"] = f"on (hand-written BPF via ctypes: deny list, {rest})"
        else:
            out["seccomp"] = "off (" + ("not used" if s.tier == "none" else "unsupported architecture") + ")"
        if s.tier == "none":
            out["rlimits"] = "on (address space, CPU, file size, open files)"
        else:
            if s.tier == "1":
                nproc = f", {jail.PROCESSES} processes and threads"
            else:
                nproc = (f", {jail.PROCESSES} processes and threads per run: RLIMIT_NPROC counts the whole uid "
                         f"here, so it is set to what uid {s.uid} already runs plus that")
            out["rlimits"] = (f"on (address space {jail.ADDRESS_SPACE >> 30} GiB, CPU, file size "
                              f"{jail.FILE_SIZE >> 20} MiB, {jail.OPEN_FILES} open files{nproc})")
        if s.tier in ("1", "2"):
            if self.cgroup_base:
                out["memory cap"] = (f"on (cgroup v2 per run: memory {confine.CGROUP_RUN_MEMORY >> 30} GiB without "
                                     f"swap, tasks; via {self.cgroup_note})")
            else:
                also = ("; memfds, SysV and POSIX shared memory are refused, so a run holds little beyond that"
                        if s.tier == "2" else "")
                out["memory cap"] = (f"off (no cgroup can be had: {self.cgroup_note}); only RLIMIT_AS "
                                     f"{jail.ADDRESS_SPACE >> 30} GiB per process, which is not a total{also}")
        who = f"uid {s.uid} (the tutor runs as root)" if s.root else f"your own uid {s.uid}"
        out["uid"] = f"snippets run as {who}"
        if s.tier == "none":
            out["capabilities"] = "none"
        elif s.tier == "1" or s.root:
            out["capabilities"] = "none (bounding set emptied, no_new_privs)"
        else:
            # Emptying the bounding set needs CAP_SETPCAP, which a process without namespaces and without
            # root never has: say what is true instead of what was attempted.
            out["capabilities"] = ("none effective or permitted; the bounding set stays full (emptying it needs "
                                   "CAP_SETPCAP, which a non-root tutor lacks), and no_new_privs keeps setuid "
                                   "programs and file capabilities from granting any")
        out["session"] = "setsid, parent-death signal, wall-clock kill of the whole process tree"
        return out

    # ------------------------------------------------------------ the loop

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
                for header, _ in self.decoder.feed(data):
                    self.handle(header)
            self._reap()
            self._tick()

    def _next_timeout(self) -> float | None:
        if len(self.idle) < self.pool and len(self.runs) < 8:
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
                if self.scratch_base:
                    soonest = min(soonest, run.next_watch - now)
        return max(0.0, soonest)

    def handle(self, msg: dict) -> None:
        op = msg.get("op")
        if op == "run":
            rid = int(msg["id"])
            try:
                self.start_run(rid, msg["request"], int(msg.get("output_limit", 64 * 1024)))
            except (OSError, ValueError, TypeError, KeyError) as exc:  # e.g. fork failed: say so, keep serving
                self.send({"op": "done", "id": rid, "setup_error": f"{type(exc).__name__}: {exc}"[:500]})
        elif op == "kill":
            for run in self.runs.values():
                if run.id == msg.get("id"):
                    run.reason = run.reason or "cancelled"
                    _kill_group(run.pid)
        elif op == "ping":
            self.send({"op": "pong", "id": msg.get("id"), "runs": len(self.runs)})
        elif op == "shutdown":
            raise SystemExit(0)

    def refusal(self, needs: set[str]) -> str:
        unknown = needs - set(jail.GRANTS)
        if unknown:
            return f"the lesson asks for {', '.join(sorted(unknown))}, which the sandbox does not know how to grant"
        if needs and self.tier == "2":
            return (f"this drill needs {', '.join(sorted(needs))}, which the sandbox grants only with namespaces "
                    "(tier 1); this machine refuses them, so it does not run here")
        return ""

    def start_run(self, rid: int, request: dict, output_limit: int) -> None:
        needs = set(request.get("needs") or ())
        if "exec" in needs:
            needs.add("processes")
        problem = self.refusal(needs)
        if problem:
            self.send({"op": "done", "id": rid, "refused": problem})
            return
        if self.torch.get_num_threads() != self.threads:  # the research notes' guard
            raise SystemExit("zygote thread count changed")
        timeout = float(request.get("timeout", 10.0))
        if not needs and self.idle and self.setup.tier != "1":
            # Tier 2: a pre-forked runner's RLIMIT_NPROC is the uid's task count when it was forked plus
            # the run's budget; if the system has gained so many tasks since that the budget may be all
            # but used up (torch needs a few threads), fork a fresh runner instead (one read of
            # /proc/loadavg decides; the system's total bounds what the uid can have gained).
            pid, idle = next(iter(self.idle.items()))
            if confine.system_task_count() > idle.tasks + jail.PROCESSES - 16:
                del self.idle[pid]
                _kill_group(pid)
                self.detached[pid] = ""
                self._drop_idle(idle)
        if not needs and self.idle:
            pid, idle = next(iter(self.idle.items()))
            del self.idle[pid]
            raw = json.dumps(request).encode()
            os.pwrite(idle.spec.result, raw, 0)  # the runner reads its request from its result memfd
            try:
                os.write(idle.go_w, len(raw).to_bytes(8, "little"))
            except OSError:
                pass  # it died while idle: reported like any run that ends without a result
            os.close(idle.go_w)
            spec, status_r, done_r = idle.spec, idle.status_r, idle.done_r
        else:
            pid, spec, status_r, _, done_r = self._spawn(frozenset(needs), request, timeout)
        self.runs[pid] = Run(rid, pid, spec, status_r, output_limit, timeout, done_r)
        self.send({"op": "started", "id": rid, "pid": pid})

    def _spawn(self, grants: frozenset, request: dict | None, timeout: float):
        """Fork a confined runner: for ``request`` now, or (``request is None``) idle, waiting for one."""
        self.spawned += 1
        out = os.memfd_create("output", os.MFD_CLOEXEC)
        res = os.memfd_create("result", os.MFD_CLOEXEC)
        status_r, status_w = os.pipe2(os.O_CLOEXEC)
        os.set_blocking(status_r, False)
        done_r, done_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        go_r = go_w = None
        if request is None:
            go_r, go_w = os.pipe2(os.O_CLOEXEC)
        scratch = "/tmp"
        if self.setup.tier != "1":
            scratch = os.path.join(self.scratch_base, f"run-{self.spawned}")
            os.mkdir(scratch, 0o700)
            if self.root:
                os.chown(scratch, self.uid, self.gid)
        cgroup = ""
        if self.cgroup_base:
            try:  # tier 1's tree also holds A and B (pid 1 of its namespace)
                cgroup = confine.new_run_cgroup(self.cgroup_base, f"run-{self.spawned}", confine.CGROUP_RUN_MEMORY,
                                                jail.PROCESSES + (2 if self.setup.tier == "1" else 0))
            except OSError:
                for fd in (out, res, status_r, status_w, done_r, done_w, go_r, go_w):
                    if fd is not None:
                        os.close(fd)
                if self.scratch_base:
                    confine.remove_tree(scratch)
                raise
        spec = jail.RunSpec(devnull=self.devnull, output=out, result=res, status=status_w, scratch=scratch,
                            timeout=timeout, grants=grants, seccomp_filter=self._filter(grants),
                            zygote_pid=self.me, go=go_r, done=done_w, cgroup=cgroup)
        env = _child_env(scratch)
        refuse_network = "loopback" not in grants
        torch = self.torch

        def body() -> None:
            _run_snippet(request if request is not None else _wait_for_request(), env, refuse_network, torch)

        try:
            pid = jail.spawn(self.setup, spec, body)
        except OSError:
            for fd in (out, res, status_r, done_r, go_w):
                if fd is not None:
                    os.close(fd)
            if self.scratch_base:
                confine.remove_tree(scratch)
            self._bury_cgroup(cgroup)
            raise
        finally:
            os.close(status_w)
            os.close(done_w)
            if go_r is not None:
                os.close(go_r)
        spec.status = spec.done = -1
        spec.go = None
        return pid, spec, status_r, go_w, done_r

    def _prefork(self) -> None:
        tasks = confine.system_task_count() if self.setup.tier != "1" else 0
        pid, spec, status_r, go_w, done_r = self._spawn(frozenset(), None, MAX_TIMEOUT)
        self.idle[pid] = Idle(pid, spec, status_r, go_w, done_r, tasks)

    def _drop_idle(self, idle: Idle) -> None:
        for fd in (idle.status_r, idle.go_w, idle.done_r, idle.spec.result, idle.spec.output):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.scratch_base:
            confine.remove_tree(idle.spec.scratch)
        self._bury_cgroup(idle.spec.cgroup)

    def _bury_cgroup(self, path: str) -> None:
        """Remove a run's cgroup now, or once its last process has gone (rmdir fails while one lives)."""
        if path:
            try:
                os.rmdir(path)
            except FileNotFoundError:
                pass
            except OSError:
                self.cgroup_graveyard.append(path)

    def _filter(self, grants: frozenset) -> bytes | None:
        if not self.setup.seccomp:
            return None
        if self.setup.tier != "1":
            return None  # tier 2: built in the runner, which names its own pid (signals: see build_filter)
        key = (self.setup.tier, grants)
        if key not in self.filters:
            sockets = "inet" if "loopback" in grants else "unix"
            self.filters[key] = confine.build_filter(sockets=sockets, processes="processes" in grants,
                                                     exec_ok="exec" in grants)
        return self.filters[key]

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.detached:
                scratch = self.detached.pop(pid)
                if scratch:
                    confine.remove_tree(scratch)
                continue
            idle = self.idle.pop(pid, None)
            if idle is not None:  # died while waiting (killed from outside, out of memory)
                self._drop_idle(idle)
                continue
            run = self.runs.get(pid)
            if run is not None and run.exit_status is None:
                run.exit_status = status
                run.reaped_at = time.monotonic()

    def _tick(self) -> None:
        now = time.monotonic()
        if self.cgroup_graveyard:
            graves, self.cgroup_graveyard = self.cgroup_graveyard, []
            for path in graves:
                self._bury_cgroup(path)
        if len(self.idle) < self.pool and len(self.runs) < 8 and now >= self.prefork_after:
            try:
                self._prefork()  # one per pass, so the loop stays responsive
            except OSError:
                self.prefork_after = now + 1.0  # out of processes or memory: runs fork on demand meanwhile
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
            elif self.scratch_base and now >= run.next_watch:
                run.next_watch = now + WATCH_EVERY
                verdict = _over_quota(run.spec.scratch, run.pid)
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

    def finish(self, run: Run, early: bool = False) -> None:
        del self.runs[run.pid]
        if run.done_r >= 0:
            os.close(run.done_r)
            run.done_r = -1
        kind, value = jail.read_status(run.status_r) if not early else ("status", 0)
        os.close(run.status_r)
        result, result_size = _read_memfd(run.spec.result, MAX_RESULT + 1)
        output, output_size = _read_memfd(run.spec.output, run.output_limit)
        os.close(run.spec.result)
        os.close(run.spec.output)
        if early:
            self.detached[run.pid] = run.spec.scratch if self.scratch_base else ""
        elif self.scratch_base:
            confine.remove_tree(run.spec.scratch)
        self._bury_cgroup(run.spec.cgroup)
        status = value if kind == "status" else run.exit_status
        header = {"op": "done", "id": run.id, "pid": run.pid, "seconds": round(time.monotonic() - run.started, 4),
                  "reason": run.reason, "result_size": result_size, "output_size": output_size,
                  "setup_error": value if kind == "error" else ""}
        header.update(_describe_status(status))
        self.send(header, result, output)

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
        graves = self.cgroup_graveyard + [run.spec.cgroup for run in self.runs.values() if run.spec.cgroup]
        self.cgroup_graveyard = []
        for path in graves:
            self._bury_cgroup(path)
        self.runs.clear()
        self.detached.clear()
        if self.scratch_base:
            confine.remove_tree(self.scratch_base)


def _wait_for_request() -> dict:
    """A pre-forked runner, confined already, blocks here until the zygote hands it a request."""
    header = b""
    while len(header) < 8:
        chunk = os.read(jail.GO_FD, 8 - len(header))
        if not chunk:
            os._exit(0)  # the zygote let us go without work
        header += chunk
    os.close(jail.GO_FD)
    size = int.from_bytes(header, "little")
    request = json.loads(os.pread(jail.RESULT_FD, size, 0))
    os.ftruncate(jail.RESULT_FD, 0)
    confine.set_cpu_limit(jail.cpu_seconds(float(request.get("timeout", 10.0))))
    return request


def _run_snippet(request: dict, env: dict, refuse_network: bool, torch) -> None:
    """The runner's body, after confinement: the snippet runs here."""
    os.environ.clear()
    os.environ.update(env)
    if refuse_network:
        child._refuse_network()
    try:
        raw = child._encode(child.run_request(request, torch))
    except BaseException as exc:  # noqa: BLE001 - describe failures must still be reported
        raw = json.dumps({"protocol": child.PROTOCOL, "error": {"phase": "sandbox", "type": type(exc).__name__,
                                                                "message": str(exc)[:2000], "line": None},
                          "asks": {}, "variables": {}, "fence": []}).encode()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    view, offset = memoryview(raw), 0
    while offset < len(raw):
        offset += os.pwrite(jail.RESULT_FD, view[offset:], offset)
    os.ftruncate(jail.RESULT_FD, len(raw))
    try:
        os.write(jail.DONE_FD, b"D")
    except OSError:
        pass
    os._exit(0)


def _child_env(scratch: str) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": scratch,
        "TMPDIR": scratch,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "OPENBLAS_NUM_THREADS": "1",
        "CUDA_VISIBLE_DEVICES": "",
        "TORCHINDUCTOR_CACHE_DIR": os.path.join(scratch, "inductor"),
    }


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


def _over_quota(path: str, pid: int) -> bool | None:
    """Tier 2: does the run hold more than its scratch budget on disk? None when it could not be measured.

    Counts the scratch tree (iteratively, whatever modes or depth the snippet gave it) and the
    files the runner keeps open or mapped after unlinking them: see ``confine.ScratchUsage``.
    As the owner, the walk gives a directory the snippet made unreadable its owner's rwx bits
    back (a snippet that revokes its own access to its own scratch directory loses that game);
    the tutor running as root reads it without changing anything.
    """
    usage = confine.ScratchUsage(path, jail.SCRATCH_BYTES, jail.SCRATCH_INODES, jail.FILE_SIZE)
    try:
        usage.measure(pid)
    except confine.OverQuota:
        return True
    except OSError:
        return None
    return False


def _try_run_cgroup(base: str) -> str:
    """A dry run of what every run does with its cgroup: create, join from a child, remove. "" when it works."""
    try:
        path = confine.new_run_cgroup(base, "run-0", confine.CGROUP_RUN_MEMORY, jail.PROCESSES)
    except OSError as exc:
        return f"cannot create a run's cgroup ({exc})"
    try:
        pid = os.fork()
        if pid == 0:
            try:
                confine.join_cgroup(path)
                os._exit(0)
            except BaseException:  # noqa: BLE001
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            return "a child cannot join a run's cgroup"
        return ""
    finally:
        for _ in range(100):  # the child's exit frees the cgroup a moment after waitpid
            try:
                os.rmdir(path)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.01)


def _traversable(path: str, uid: int, gid: int) -> bool:
    current = "/"
    for part in [p for p in path.split("/") if p]:
        if not _may(current, uid, gid, stat.S_IXUSR):
            return False
        current = os.path.join(current, part)
    return _may(current, uid, gid, stat.S_IXUSR | stat.S_IRUSR)


def _may(path: str, uid: int, gid: int, user_bits: int) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    if st.st_uid == uid:
        bits = user_bits
    elif st.st_gid == gid:
        bits = user_bits >> 3
    else:
        bits = user_bits >> 6
    return (st.st_mode & bits) == bits


def _reachable_anchor(path: str, uid: int, gid: int) -> str | None:
    """The directory just below the deepest one on ``path`` that uid/gid cannot search, if all below is searchable."""
    parts = [p for p in path.split("/") if p]
    blocked = None
    for k in range(len(parts)):
        if not _may("/" + "/".join(parts[:k]), uid, gid, stat.S_IXUSR):
            blocked = k
    if blocked is None:
        return None
    for k in range(blocked + 1, len(parts) + 1):
        if not _may("/" + "/".join(parts[:k]), uid, gid, stat.S_IXUSR):
            return None
    return "/" + "/".join(parts[:blocked + 1])


def main() -> int:
    args = sys.argv[1:]
    tier = args[args.index("--tier") + 1] if "--tier" in args else "1"
    fd = int(args[args.index("--fd") + 1])
    pool = int(args[args.index("--pool") + 1]) if "--pool" in args else 2
    sock = socket.socket(fileno=fd)
    sock.setblocking(True)
    zygote = Zygote(sock, tier, pool)
    try:
        ready = zygote.prepare()
    except BaseException as exc:  # noqa: BLE001 - tell the UI why, then go
        try:
            sock.sendall(framing.pack({"op": "error", "message": f"{type(exc).__name__}: {exc}"[:2000]}))
        except OSError:
            pass
        if zygote.scratch_base:
            confine.remove_tree(zygote.scratch_base)
        return 1
    try:
        zygote.send(ready)
        zygote.serve()
    except (SystemExit, OSError, framing.FrameError):
        pass
    finally:
        zygote.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
