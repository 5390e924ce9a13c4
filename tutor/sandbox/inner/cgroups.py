"""A memory and tasks cap per run from a delegated cgroup v2 subtree, where one can be had."""

from __future__ import annotations

import os

# ---------------------------------------------------------------- a memory and pids cap (cgroup v2)
#
# Per-process rlimits are not a memory cap: RLIMIT_AS does not count tmpfs, pipe buffers or
# kernel objects, and tier 1 may run 64 processes. A cgroup is the only total cap, and an
# unprivileged process gets one only when a cgroup v2 subtree is delegated to it: typically a
# systemd user scope with Delegate=yes. The zygote asks the user's systemd for one over D-Bus
# (what `systemd-run --user --scope -p Delegate=yes` does, but for its own, already running
# pid: no exec, so its descriptors stay as they are) when a user bus exists, and otherwise uses
# the cgroup it is in if that one is delegated to it. Without either (a cgroup v1 or hybrid
# host, no user manager, a container) there is no such cap, and the tutor says so.



def cgroup2_mount(mountinfo: str = "/proc/self/mountinfo") -> str | None:
    """Where the cgroup v2 hierarchy is mounted (``/sys/fs/cgroup``, or ``…/unified`` on a hybrid host)."""
    try:
        with open(mountinfo) as f:
            for line in f:
                left, _, right = line.partition(" - ")
                if right.split(" ", 1)[0] == "cgroup2":
                    return left.split()[4].replace("\\040", " ")
    except OSError:
        pass
    return None


def own_cgroup(proc_cgroup: str = "/proc/self/cgroup") -> str | None:
    """This process's cgroup v2 path (the ``0::`` line), or None."""
    try:
        with open(proc_cgroup) as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].strip()
    except OSError:
        pass
    return None


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def delegated_cgroup(mount: str | None = None, relpath: str | None = None, pid: int | None = None
                     ) -> tuple[str | None, str]:
    """Turn our own cgroup into a sandbox subtree if it is delegated to us; (base, "") or (None, why not).

    Needs our cgroup to have the memory and pids controllers, to be writable by us, and to hold
    no process but ours (cgroup v2 gives controllers only to cgroups without processes of their
    own, so we move into a ``zygote`` leaf and runs go into ``run-N`` siblings).
    """
    mount = mount if mount is not None else cgroup2_mount()
    if mount is None:
        return None, "no cgroup v2 hierarchy is mounted"
    relpath = relpath if relpath is not None else own_cgroup()
    if relpath is None:
        return None, "this process is in no cgroup v2 group"
    pid = pid if pid is not None else os.getpid()
    ours = os.path.join(mount, relpath.lstrip("/")).rstrip("/")
    available = _read(f"{ours}/cgroup.controllers").split()
    missing = [c for c in ("memory", "pids") if c not in available]
    if missing:
        v1 = [c for c in missing if os.path.isdir(f"/sys/fs/cgroup/{c}")]
        why = f"cgroup v2 (at {mount}) gives this process's cgroup {relpath} no {' or '.join(missing)} controller"
        if v1:
            why += f" (cgroup v1 owns {', '.join(v1)} on this hybrid host)"
        return None, why
    if not all(os.access(p, os.W_OK) for p in (ours, f"{ours}/cgroup.procs", f"{ours}/cgroup.subtree_control")):
        return None, f"the cgroup {relpath} is not delegated to uid {os.geteuid()}"
    procs = [p for p in _read(f"{ours}/cgroup.procs").split() if p]
    if procs != [str(pid)] and "memory" not in _read(f"{ours}/cgroup.subtree_control").split():
        return None, f"the cgroup {relpath} also holds {len(procs) - 1} other processes"
    try:
        os.makedirs(f"{ours}/zygote", exist_ok=True)
        _write(f"{ours}/zygote/cgroup.procs", str(pid))
        _write(f"{ours}/cgroup.subtree_control", "+memory +pids")
    except OSError as exc:
        return None, f"could not set up {relpath}: {exc.strerror or exc}"
    return ours, ""


def systemd_scope(timeout: float = 5.0) -> str:
    """Ask the user's systemd for a delegated scope for this process; "" when done, else why not."""
    import shutil
    import subprocess

    uid = os.getuid()
    bus = f"/run/user/{uid}/bus"
    busctl = shutil.which("busctl", path="/usr/bin:/bin")
    if not (busctl and os.path.exists(bus)):
        return "no systemd user manager (no busctl or no user bus)"
    before = own_cgroup()
    name = f"pytorch-tutor-sandbox-{os.getpid()}.scope"
    try:
        done = subprocess.run(
            [busctl, "--user", "call", "--quiet", "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
             "org.freedesktop.systemd1.Manager", "StartTransientUnit", "ssa(sv)a(sa(sv))", name, "fail", "3",
             "PIDs", "au", "1", str(os.getpid()), "Delegate", "b", "true", "CollectMode", "s", "inactive-or-failed",
             "0"],
            env={"DBUS_SESSION_BUS_ADDRESS": f"unix:path={bus}", "PATH": "/usr/bin:/bin"},
            stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"systemd did not answer ({exc})"
    if done.returncode != 0:
        return "systemd refused a scope: " + done.stderr.decode("utf-8", "replace").strip()[:200]
    import time

    deadline = time.monotonic() + timeout
    while own_cgroup() == before and time.monotonic() < deadline:  # the job moves us asynchronously
        time.sleep(0.01)
    return "" if own_cgroup() != before else "systemd did not move the zygote into its scope"


def sandbox_cgroup() -> tuple[str | None, str]:
    """The zygote's cgroup subtree for per-run caps: (base, how it was had) or (None, why there is none)."""
    base, why = delegated_cgroup()
    if base:
        return base, "a delegated cgroup v2 subtree"
    if cgroup2_mount() is not None and "controller" not in why:
        scope_why = systemd_scope()
        if not scope_why:
            base, why2 = delegated_cgroup()
            if base:
                return base, "a systemd user scope (Delegate=yes)"
            why = f"{why}; in systemd's scope: {why2}"
        else:
            why = f"{why}; {scope_why}"
    return None, why


def new_run_cgroup(base: str, name: str, memory: int, tasks: int) -> str:
    """Create ``base/name`` capped at ``memory`` bytes (no swap) and ``tasks`` tasks; the run joins it itself."""
    path = f"{base}/{name}"
    os.mkdir(path)
    try:
        _write(f"{path}/memory.max", str(memory))
        if os.path.exists(f"{path}/memory.swap.max"):
            _write(f"{path}/memory.swap.max", "0")
        if os.path.exists(f"{path}/memory.oom.group"):
            _write(f"{path}/memory.oom.group", "1")  # an OOM kill takes the whole run, not one worker
        _write(f"{path}/pids.max", str(tasks))
    except OSError:
        os.rmdir(path)
        raise
    return path


def join_cgroup(path: str) -> None:
    _write(f"{path}/cgroup.procs", "0")  # "0": the writing process

