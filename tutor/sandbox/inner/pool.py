"""Forking confined runners: for a request now, or ahead of time into the pre-forked pool.

A pre-forked runner is fully confined before any request exists (rlimits, Landlock,
seccomp: everything ``tree.spawn`` does), then blocks on its "go" pipe; a request
without grants is written into its result memfd and the pipe woken, so a Run does
not wait for fork and confinement. Requests with grants (``needs``) get a runner
forked for them, confined accordingly.
"""

from __future__ import annotations

import os
import time

from tutor.sandbox.inner import cgroups, kernel, scratch, seccomp, tree
from tutor.sandbox.inner.compile_cache import TARGET as CACHE_TARGET
from tutor.sandbox.inner.runner import run_snippet, wait_for_request
from tutor.sandbox.wire import CGROUP_RUN_MEMORY, MAX_TIMEOUT, OUTPUT_TARGET, PROCESSES, SLACK, RunRequest, Tier

WATCH_EVERY = 0.1  # tier 2: how often the on-disk scratch directory is measured


class Run:
    """A runner at work on a request, until its result is read."""

    def __init__(self, rid: int, pid: int, spec: tree.RunSpec, status_r: int, output_limit: int, timeout: float,
                 done_r: int = -1):
        self.id = rid
        self.done_r = done_r
        self.pid = pid
        self.spec = spec
        self.status_r = status_r
        self.output_limit = output_limit
        self.started = time.monotonic()
        self.started_wall = time.time()  # what the compile cache's files are dated by (``CompileCache.discard_since``)
        self.deadline = self.started + timeout + SLACK
        self.timeout = timeout
        self.reason = ""  # timeout | cancelled | scratch
        self.exit_status: int | None = None
        self.reaped_at = 0.0
        self.next_watch = self.started + WATCH_EVERY
        self.unmeasured = 0  # tier 2: watches in a row that could not measure the scratch directory
        # A judged run's call channel (``remote.py``). A learner's half that serves calls: the
        # zygote's ends (calls' write end, replies' read end), held until a judge takes them; the
        # run is "answered" once its result went back and it stays to serve. A judge's half: the
        # learner's half it calls (its Run), ended with it.
        self.channel: tuple[int, int] | None = None
        self.answered = False
        self.peer: Run | None = None


class Idle:
    """A pre-forked, fully confined runner waiting on its ``go`` pipe for a request."""

    def __init__(self, pid: int, spec: tree.RunSpec, status_r: int, go_w: int, done_r: int, tasks: int = 0):
        self.pid = pid
        self.done_r = done_r
        self.spec = spec
        self.status_r = status_r
        self.go_w = go_w
        self.tasks = tasks  # tier 2: the system's task count when it was forked (its RLIMIT_NPROC is fixed then)


class Forker:
    """Everything a runner is forked with, fixed for the zygote's life, and the cgroups runs leave behind."""

    def __init__(self, setup: tree.Setup, torch, scratch_base: str, cgroup_base: str | None):
        self.setup = setup
        self.torch = torch
        self.scratch_base = scratch_base
        self.cgroup_base = cgroup_base
        self.me = os.getpid()
        self.devnull = os.open(os.devnull, os.O_RDWR)
        self.spawned = 0
        self.filters: dict[frozenset, bytes | None] = {}
        self.graveyard: list[str] = []  # run cgroups to remove once their last process is gone

    def uses_cache(self, grants: frozenset, request: RunRequest | None) -> bool:
        """Whether a run sees the compile cache: tier 1 has one, the run is granted exec and asks for it."""
        return bool(self.setup.compile_cache and request is not None and request.compile_cache and "exec" in grants)

    def spawn(self, grants: frozenset, request: RunRequest | None, timeout: float,
              channel: tuple[int, int] | None = None):
        """Fork a confined runner: for ``request`` now, or (``request is None``) idle, waiting for one.

        ``channel``: the (read, write) ends of a call channel the runner gets as fds 7 and 8 (the
        caller closes its own copies afterwards, whether this returned or raised)."""
        self.spawned += 1
        cache = self.uses_cache(grants, request)
        output = bool(self.setup.output_dir and "output-dir" in grants)
        out = os.memfd_create("output", os.MFD_CLOEXEC)
        res = os.memfd_create("result", os.MFD_CLOEXEC)
        status_r, status_w = os.pipe2(os.O_CLOEXEC)
        os.set_blocking(status_r, False)
        done_r, done_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        go_r = go_w = None
        if request is None:
            go_r, go_w = os.pipe2(os.O_CLOEXEC)
        run_scratch = "/tmp"
        if self.setup.tier != Tier.NAMESPACES:
            run_scratch = os.path.join(self.scratch_base, f"run-{self.spawned}")
            os.mkdir(run_scratch, 0o700)
            if self.setup.root:
                os.chown(run_scratch, self.setup.uid, self.setup.gid)
        cgroup = ""
        if self.cgroup_base:
            try:  # tier 1's tree also holds A and B (pid 1 of its namespace)
                cgroup = cgroups.new_run_cgroup(self.cgroup_base, f"run-{self.spawned}", CGROUP_RUN_MEMORY,
                                                PROCESSES + (2 if self.setup.tier == Tier.NAMESPACES else 0))
            except OSError:
                for fd in (out, res, status_r, status_w, done_r, done_w, go_r, go_w):
                    if fd is not None:
                        os.close(fd)
                if self.scratch_base:
                    scratch.remove_tree(run_scratch)
                raise
        spec = tree.RunSpec(devnull=self.devnull, output=out, result=res, status=status_w, scratch=run_scratch,
                            timeout=timeout, grants=grants, seccomp_filter=self._filter(grants),
                            zygote_pid=self.me, go=go_r, done=done_w, cgroup=cgroup, cache=cache, writes_output=output,
                            hidden=tree.runner_paths(self.setup, request.hidden) if request is not None else (),
                            channel=channel)
        env = child_env(run_scratch, CACHE_TARGET if cache else "")
        if output:
            env["PYTORCH_TUTOR_OUTPUT_DIR"] = OUTPUT_TARGET
        torch = self.torch

        def body() -> None:
            run_snippet(request if request is not None else wait_for_request(_cpu_limit), env, torch,
                        kernel_refuses_network=self.setup.seccomp)

        try:
            pid = tree.spawn(self.setup, spec, body)
        except OSError:
            for fd in (out, res, status_r, done_r, go_w):
                if fd is not None:
                    os.close(fd)
            if self.scratch_base:
                scratch.remove_tree(run_scratch)
            self.bury_cgroup(cgroup)
            raise
        finally:
            os.close(status_w)
            os.close(done_w)
            if go_r is not None:
                os.close(go_r)
        spec.status = spec.done = -1
        spec.go = None
        return pid, spec, status_r, go_w, done_r

    def prefork(self) -> Idle:
        tasks = kernel.system_task_count() if self.setup.tier != Tier.NAMESPACES else 0
        pid, spec, status_r, go_w, done_r = self.spawn(frozenset(), None, MAX_TIMEOUT)
        return Idle(pid, spec, status_r, go_w, done_r, tasks)

    def hand_over(self, idle: Idle, request: RunRequest) -> None:
        """Give a pre-forked runner its request: written into its result memfd, then its go pipe woken."""
        raw = request.to_json()
        os.pwrite(idle.spec.result, raw, 0)
        try:
            os.write(idle.go_w, len(raw).to_bytes(8, "little"))
        except OSError:
            pass  # it died while idle: reported like any run that ends without a result
        os.close(idle.go_w)

    def drop_idle(self, idle: Idle) -> None:
        for fd in (idle.status_r, idle.go_w, idle.done_r, idle.spec.result, idle.spec.output):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.scratch_base:
            scratch.remove_tree(idle.spec.scratch)
        self.bury_cgroup(idle.spec.cgroup)

    def bury_cgroup(self, path: str) -> None:
        """Remove a run's cgroup now, or once its last process has gone (rmdir fails while one lives)."""
        if path:
            try:
                os.rmdir(path)
            except FileNotFoundError:
                pass
            except OSError:
                self.graveyard.append(path)

    def bury_the_dead(self) -> None:
        graves, self.graveyard = self.graveyard, []
        for path in graves:
            self.bury_cgroup(path)

    def _filter(self, grants: frozenset) -> bytes | None:
        if not self.setup.seccomp:
            return None
        if self.setup.tier != Tier.NAMESPACES:
            return None  # tier 2: built in the runner, which names its own pid (signals: see build_filter)
        if grants not in self.filters:
            sockets = "inet" if "loopback" in grants else "unix"
            self.filters[grants] = seccomp.build_filter(sockets=sockets, processes="processes" in grants,
                                                        exec_ok="exec" in grants)
        return self.filters[grants]


def _cpu_limit(timeout: float) -> None:
    kernel.set_cpu_limit(tree.cpu_seconds(timeout))


def child_env(run_scratch: str, compile_cache: str = "") -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": run_scratch,
        "TMPDIR": run_scratch,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "OPENBLAS_NUM_THREADS": "1",
        "CUDA_VISIBLE_DEVICES": "",
        "TORCHINDUCTOR_CACHE_DIR": compile_cache or os.path.join(run_scratch, "inductor"),
        "TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS": "0",  # one 148 MiB file: see compile_cache.py
    }
