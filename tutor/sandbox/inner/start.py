"""The zygote's start-up: decide what every run gets (a ``tree.Setup``), warm torch, and say what was found.

The facts go back to the UI side in the ``ready`` message; what they mean for the
learner (each layer's status) is written there (``tutor/sandbox/layers.py``), not here.
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import time
from dataclasses import dataclass

from tutor.sandbox.inner import cgroups, kernel, landlock, mounts, scratch, seccomp, warm
from tutor.sandbox.inner.compile_cache import CompileCache
from tutor.sandbox.inner.output_dir import OutputDir
from tutor.sandbox.inner.tree import PATH_FD_BASE, Setup
from tutor.sandbox.wire import CGROUP_RUN_MEMORY, PROCESSES, Tier


@dataclass
class Started:
    setup: Setup
    torch: object
    threads: int
    scratch_base: str  # tiers 2 and 3: the host directory that holds each run's scratch ("" in tier 1)
    cgroup_base: str | None  # a delegated cgroup v2 subtree: per-run memory and task caps
    cgroup_note: str  # how it was had, or why there is none
    compile_cache: CompileCache | None  # tier 1: the course's compile cache, for runs granted exec
    facts: dict  # the ``ready`` message
    output_dir: OutputDir | None = None  # tier 1: the caller's output directory, for runs granted output-dir


def prepare(tier: Tier, extra_ro: list[tuple[int, str]], compile_cache: str = "", output_dir: str = "",
            threads: int = 0) -> Started:
    started = time.monotonic()
    os.umask(0o077)
    os.chdir("/")
    kernel.set_child_subreaper()
    root = os.geteuid() == 0
    uid = kernel.NOBODY if root else os.getuid()
    gid = kernel.NOBODY if root else os.getgid()
    cgroup_base, cgroup_note = None, ""
    if tier in (Tier.NAMESPACES, Tier.LANDLOCK):
        cgroup_base, cgroup_note = cgroups.sandbox_cgroup()  # before torch: it may fork busctl
        if cgroup_base:
            problem = _try_run_cgroup(cgroup_base)
            if problem:  # never let a half-working cgroup fail every run: go without, and say why
                cgroup_base, cgroup_note = None, f"{cgroup_note} is unusable: {problem}"
    abi = landlock.landlock_abi() if tier != Tier.NONE else 0
    has_seccomp = seccomp.seccomp_supported() and tier != Tier.NONE
    held = {os.path.abspath(path): fd for fd, path in extra_ro}
    extra = mounts.without(list(held), mounts.hidden_dirs(list(held)))  # never the tutor's own course
    cache = CompileCache.open(compile_cache, uid, gid, root) if compile_cache and tier == Tier.NAMESPACES else None
    output = OutputDir.open(output_dir, uid, gid, root) if output_dir and tier == Tier.NAMESPACES else None
    path_fds: list[int] = []
    python_ro: list[str] = []
    plan = None
    scratch_base = ""
    if tier != Tier.NAMESPACES:
        path_fds, python_ro = warm.reachable_python(uid, gid, root)
        scratch_base = tempfile.mkdtemp(prefix="pytorch-tutor-sandbox-")
        os.chmod(scratch_base, 0o711)
    python_fds = list(path_fds)
    numbers = _keep_held(held, path_fds)
    shown = [path for path in extra if path not in numbers]  # a path cut up around a hidden directory: by name
    if tier == Tier.NAMESPACES:
        plan = mounts.build_plan(extra, held=numbers)
        allowed = extra
        names = {path: path for path in held}  # bound at the same place in the private root
    else:  # Landlock's rule goes on the held directory itself (/proc/self/fd/N opens it, not a path lookup)
        allowed = shown + [f"/proc/self/fd/{numbers[path]}" for path in extra if path in numbers]
        names = {path: f"/proc/self/fd/{numbers[path]}" if path in numbers else path for path in held}
    setup = Setup(tier=tier, uid=uid, gid=gid, root=root, landlock_abi=abi, seccomp=has_seccomp, plan=plan,
                  base=_mount_base(), path_fds=path_fds, python_ro=python_ro, extra_ro=allowed, extra_names=names,
                  compile_cache=cache.path if cache else "", output_dir=output.path if output else "")
    torch, threads = warm.warm_torch(threads)
    if python_fds:
        warm.cache_unreachable_sources(uid, gid)
    sys.stdout.reconfigure(line_buffering=True)
    gc.collect()
    gc.freeze()
    facts = {
        "op": "ready", "pid": os.getpid(), "tier": tier, "uid": uid, "root": root, "landlock_abi": abi,
        "seccomp": has_seccomp, "seccomp_backend": seccomp.BACKEND, "torch": torch.__version__, "threads": threads,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "python": sys.executable, "scratch_base": scratch_base, "plan": plan.as_dict() if plan else None,
        "path_fds": len(path_fds), "extra_ro": extra, "warm_seconds": round(time.monotonic() - started, 3),
        "cgroup": bool(cgroup_base), "cgroup_note": cgroup_note, "compile_cache": cache.path if cache else "",
        "output_dir": output.path if output else "",
    }
    return Started(setup, torch, threads, scratch_base, cgroup_base, cgroup_note, cache, facts, output)


def _keep_held(held: dict[str, int], path_fds: list[int]) -> dict[str, int]:
    """Move each directory descriptor the caller handed over to the next fixed number every run keeps
    (``tree.PATH_FD_BASE`` + i, appended to ``path_fds``); return {path: number}. Each must still be a directory."""
    import stat

    moved = {}
    for path, fd in held.items():
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(f"read-only path {path!r}: the descriptor handed over is not a directory")
        moved[path] = os.dup(fd)  # off its old number first: that may be one of the fixed numbers
        os.close(fd)
    numbers = {}
    for path, fd in moved.items():
        number = PATH_FD_BASE + len(path_fds)
        os.dup2(fd, number, inheritable=True)
        os.close(fd)
        path_fds.append(number)
        numbers[path] = number
    return numbers


def _mount_base() -> str:
    for base in ("/tmp", "/mnt", "/var/tmp", "/media"):
        if os.path.isdir(base) and not os.path.islink(base):
            return base
    return "/tmp"


def _try_run_cgroup(base: str) -> str:
    """A dry run of what every run does with its cgroup: create, join from a child, remove. "" when it works."""
    try:
        path = cgroups.new_run_cgroup(base, "run-0", CGROUP_RUN_MEMORY, PROCESSES)
    except OSError as exc:
        return f"cannot create a run's cgroup ({exc})"
    try:
        pid = os.fork()
        if pid == 0:
            try:
                cgroups.join_cgroup(path)
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


def remove_scratch_base(path: str) -> None:
    if path:
        scratch.remove_tree(path)
