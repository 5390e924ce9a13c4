"""The process tree of one sandboxed run, shared by the zygote and the start-up probe.

::

    zygote ──fork──▶ A  setsid, its run's cgroup (where one can be had), PDEATHSIG, fds 0-6 only,
                        oom_score_adj 1000
                        tier 1: unshare(net, pid, ipc, uts, mount [+ user when not root])
                     └─fork──▶ B  pid 1 of the new pid namespace: private root, fresh /proc,
                                   scratch tmpfs; as root: drop to nobody, then unshare(user)
                               └─fork──▶ C  the runner (pid 2)
                        tiers 2, 3: A itself is the runner

    runner: drop root → PDEATHSIG → cwd scratch → rlimits → no_new_privs → Landlock → SIGSYS reporter
            → seccomp → body()

fds in every process of the tree: 0 /dev/null, 1 and 2 the output memfd, 3 the result
memfd, 4 the status pipe (B, or a failing setup step, reports there; the runner closes it
before any snippet code runs), 5 the runner's "done" pipe (so the zygote need not wait for
a 200 MB process tree to tear down before answering), 6 a pre-forked runner's "go" pipe, 7 and 8 a
judged run's call channel (``remote.py``: the judge's calls into a learner's process that stays to
answer them; read end 7, write end 8; only the runner keeps them), and from 200 up, O_PATH
descriptors for Python directories the sandbox uid could not otherwise reach (tiers 2 and 3 when run
as root).
"""

from __future__ import annotations

import os
import resource
import signal
import struct
from dataclasses import dataclass, field

from tutor.sandbox.inner import cgroups, kernel, landlock, mounts, seccomp
from tutor.sandbox.inner.compile_cache import TARGET as CACHE_TARGET
from tutor.sandbox.wire import (ADDRESS_SPACE, FILE_SIZE, OPEN_FILES, OUTPUT_BYTES, OUTPUT_TARGET, PROCESSES, SCRATCH_BYTES,
                                SCRATCH_INODES, Tier)

PATH_FD_BASE = 200
STATUS_FD = 4
RESULT_FD = 3
DONE_FD = 5
GO_FD = 6
CHANNEL_IN_FD = 7  # a judged run's call channel (``remote.py``): what the other half sends
CHANNEL_OUT_FD = 8  # and where this half writes


@dataclass
class Setup:
    """Fixed for the life of a zygote."""

    tier: Tier
    uid: int  # the uid snippets run as
    gid: int
    root: bool  # started as root: drop to uid/gid
    landlock_abi: int = 0
    seccomp: bool = False
    plan: mounts.RootPlan | None = None  # tier 1
    base: str = "/tmp"  # tier 1: where the private root is assembled (inside the new mount namespace)
    path_fds: list[int] = field(default_factory=list)  # at PATH_FD_BASE + i in every process
    python_ro: list[str] = field(default_factory=list)  # Python directories, as the runner names them
    extra_ro: list[str] = field(default_factory=list)  # what the caller asked to show read-only (a course's code)
    extra_names: dict[str, str] = field(default_factory=dict)  # each of those host paths -> how a runner names it
    compile_cache: str = ""  # tier 1: the course's compile cache on the host (``compile_cache.py``)
    output_dir: str = ""  # tier 1: the caller's output directory on the host (``output_dir.py``)


def runner_paths(setup: Setup, hidden) -> tuple[str, ...]:
    """Hidden host paths as a runner names them, and as the host does: only those inside a read-only
    course directory count (a request cannot use this to reach, or to cut up, anything else). Both
    names, because Landlock's rules follow inodes: a package installed in site-packages is also
    beneath the interpreter's own directory, whose rule must be cut up around the file too."""
    out = []
    for path in hidden:
        path = os.path.abspath(path)
        for host, name in setup.extra_names.items():
            if path.startswith(host.rstrip("/") + "/"):
                out.append(name + path[len(host):])
                if name != host:
                    out.append(path)
                break
    return tuple(out)


@dataclass
class RunSpec:
    """One run."""

    devnull: int
    output: int
    result: int
    status: int
    scratch: str  # cwd: "/tmp" in tier 1 (a tmpfs), a host directory otherwise
    timeout: float
    grants: frozenset = frozenset()
    seccomp_filter: bytes | None = None
    zygote_pid: int = 0
    done: int = -1  # the runner writes "D" here once its result is complete (fd 5)
    go: int | None = None  # pre-forked runners wait on this pipe for their request (fd 6)
    cgroup: str = ""  # a cgroup v2 directory capping this run's memory and tasks, when one can be had
    cache: bool = False  # this run sees the compile cache read-write (tier 1, granted exec, learner side)
    writes_output: bool = False  # this run sees the output directory read-write (tier 1, granted output-dir)
    hidden: tuple[str, ...] = ()  # paths inside extra_ro this run may not read, as the runner names them
    channel: tuple[int, int] | None = None  # (read, write) ends of a judged run's call channel (fds 7, 8)


def spawn(setup: Setup, spec: RunSpec, body) -> int:
    """Fork A and return its pid; in the child, confine per tier and call ``body()`` (never returns)."""
    pid = os.fork()
    if pid:
        return pid
    try:
        _reset_signals()
        kernel.set_pdeathsig(signal.SIGKILL)
        if os.getppid() != spec.zygote_pid:
            os._exit(70)
        os.setsid()
        if spec.cgroup:  # first, so that nothing this tree starts escapes the cap
            cgroups.join_cgroup(spec.cgroup)
        _oom_first()
        _arrange(spec, setup.path_fds)
        if setup.tier == Tier.NAMESPACES:
            _tier1_a(setup, spec, body)
        else:
            _runner(setup, spec, body, tier1=False)
    except BaseException as exc:  # noqa: BLE001 - we are a forked copy: never return into the caller
        report_error(exc)
    os._exit(70)


def report_error(exc: BaseException) -> None:
    try:
        os.write(STATUS_FD, b"E" + f"{type(exc).__name__}: {exc}"[:900].encode("utf-8", "replace"))
    except OSError:
        pass


def read_status(fd: int) -> tuple[str, object]:
    """What the tree reported: ("status", raw wait status) | ("error", message) | ("", None)."""
    try:
        data = os.read(fd, 4096)
    except (BlockingIOError, OSError):
        return "", None
    if data[:1] == b"S" and len(data) >= 5:
        return "status", struct.unpack("<i", data[1:5])[0]
    if data[:1] == b"E":
        return "error", data[1:].decode("utf-8", "replace")
    return "", None


def _reset_signals() -> None:
    try:
        signal.set_wakeup_fd(-1)
    except ValueError:
        pass
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _oom_first() -> None:
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass


def _arrange(spec: RunSpec, path_fds: list[int]) -> None:
    import fcntl

    wanted = [spec.devnull, spec.output, spec.output, spec.result, spec.status, spec.done]
    if spec.go is not None or spec.channel is not None:
        wanted.append(spec.go if spec.go is not None else spec.devnull)
    if spec.channel is not None:
        wanted.extend(spec.channel)
    wanted = [fd if fd >= 0 else spec.devnull for fd in wanted]
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in wanted]
    for i, fd in enumerate(high):
        os.dup2(fd, i)
    for fd in high:
        os.close(fd)
    keep = {PATH_FD_BASE + i for i in range(len(path_fds))}
    # everything else goes: the zygote's socket to the UI above all
    _close_range(len(wanted), PATH_FD_BASE - 1)
    _close_range(PATH_FD_BASE + len(keep), 0x7FFFFFFF)


def _close_range(first: int, last: int) -> None:
    if first > last:
        return
    if kernel._syscall(kernel._NR_CLOSE_RANGE, first, last, 0) != 0:
        os.closerange(first, min(last + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


def _tier1_a(setup: Setup, spec: RunSpec, body) -> None:
    if setup.root:
        kernel.unshare(kernel.CLONE_NEWNS | kernel.CLONE_NEWPID | kernel.CLONE_NEWNET
                        | kernel.CLONE_NEWIPC | kernel.CLONE_NEWUTS)
    else:
        # setup.uid/gid are our ids as read before this call: inside the new user namespace, until the
        # maps are written, getuid() answers the overflow uid (65534), and mapping that fails with EPERM
        kernel.unshare(kernel.CLONE_NEWUSER | kernel.CLONE_NEWNS | kernel.CLONE_NEWPID
                        | kernel.CLONE_NEWNET | kernel.CLONE_NEWIPC | kernel.CLONE_NEWUTS)
        kernel.write_id_maps(setup.uid, setup.gid)
    b = os.fork()
    if b == 0:
        try:
            _tier1_b(setup, spec, body)
        except BaseException as exc:  # noqa: BLE001
            report_error(exc)
        os._exit(70)
    kernel.set_name("sandbox-a")
    _close_range(DONE_FD, CHANNEL_OUT_FD)
    while True:
        try:
            os.waitpid(b, 0)
            break
        except InterruptedError:
            continue
    os._exit(0)


def _tier1_b(setup: Setup, spec: RunSpec, body) -> None:
    kernel.set_pdeathsig(signal.SIGKILL)
    kernel.set_name("sandbox-init")
    kernel.set_hostname("sandbox")
    if "loopback" in spec.grants:
        kernel.loopback_up()
    assert setup.plan is not None
    mounts.build_root(setup.plan, setup.base, setup.uid, setup.gid, SCRATCH_BYTES, SCRATCH_INODES,
                       shm="processes" in spec.grants, exec_ok="exec" in spec.grants,
                       cache=(setup.compile_cache, CACHE_TARGET) if spec.cache else None,
                       output=(setup.output_dir, OUTPUT_TARGET) if spec.writes_output else None, hidden=spec.hidden)
    if setup.root:
        kernel.drop_to(setup.uid, setup.gid)
        kernel.set_pdeathsig(signal.SIGKILL)
        kernel.unshare(kernel.CLONE_NEWUSER)
        kernel.write_id_maps(setup.uid, setup.gid)
    kernel.drop_capabilities()
    c = os.fork()
    if c == 0:
        try:
            _runner(setup, spec, body, tier1=True)
        except BaseException as exc:  # noqa: BLE001
            report_error(exc)
        os._exit(70)
    _close_range(DONE_FD, CHANNEL_OUT_FD)
    # pid 1: reap everything; when the runner ends, report its status and leave, which
    # makes the kernel kill whatever else is left in this pid namespace.
    while True:
        try:
            pid, status = os.wait()
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(0)
        if pid == c:
            try:
                os.write(STATUS_FD, b"S" + struct.pack("<i", status))
            except OSError:
                pass
            os._exit(0)


def rlimits(tier1: bool, output: bool = False) -> dict:
    limits = {
        resource.RLIMIT_AS: ADDRESS_SPACE,
        # a run that writes the output directory may write files as large as its budget (a checkpoint)
        resource.RLIMIT_FSIZE: OUTPUT_BYTES if output else FILE_SIZE,
        resource.RLIMIT_NOFILE: OPEN_FILES,
        resource.RLIMIT_CORE: 0,
    }
    if tier1:  # inside a user namespace the count covers this sandbox alone
        limits[resource.RLIMIT_NPROC] = PROCESSES
    else:
        # Without a user namespace RLIMIT_NPROC counts every task (threads included) of the real uid:
        # the learner's whole session, or every sandbox uid process when the tutor runs as root. A
        # fixed value would be wrong both ways (a busy desktop already runs hundreds), so the limit is
        # what the uid runs now plus this run's budget: the snippet gets PROCESSES tasks (itself
        # included) and cannot exhaust the host's pids or threads. Counted here, in the runner, just
        # before it is confined; the zygote replaces a pre-forked runner whose count has gone stale.
        limits[resource.RLIMIT_NPROC] = kernel.uid_task_count(os.getuid()) + PROCESSES - 1
    return limits


def cpu_seconds(timeout: float) -> int:
    return int(timeout + 1.999) * (os.cpu_count() or 1) + 1


# What a tier-2 run may read of its own /proc/<pid>: named entries, not the directory. The whole
# directory would show the host's network (net/: interfaces, sockets, routes) and mounts (mountinfo,
# mounts, mountstats), since without namespaces those are the host's; task/ is left out too, as each
# task/<tid>/ holds the same net/ and mountinfo again (threads still work: nothing needs to read it).
OWN_PROC_ENTRIES = ("status", "stat", "statm", "cmdline", "comm", "environ", "limits", "maps", "smaps",
                    "smaps_rollup", "fd", "fdinfo", "cgroup", "io", "sched", "schedstat", "wchan", "oom_score",
                    "oom_score_adj", "loginuid", "sessionid", "personality", "auxv")


def landlock_paths(setup: Setup, spec: RunSpec) -> tuple[list, list, list, list]:
    """What a run's Landlock rules allow: (read-only, read-write, devices, list-only directories)."""
    devices = ["/dev/null", "/dev/zero", "/dev/full"]
    if setup.tier == Tier.NAMESPACES:
        rw = (["/tmp"] + (["/dev/shm"] if "processes" in spec.grants else []) + ([CACHE_TARGET] if spec.cache else [])
              + ([OUTPUT_TARGET] if spec.writes_output else []))
        ro, listable = mounts.split_hidden(["/"], list(spec.hidden)) if spec.hidden else (["/"], [])
        return ro, rw, devices, listable
    own = f"/proc/{os.getpid()}"
    ro = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc/ld.so.cache", "/etc/localtime",
          "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/sys/devices/system/cpu",
          *(f"{own}/{entry}" for entry in OWN_PROC_ENTRIES),
          "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/dev/urandom", "/dev/random"]
    ro = [p for p in ro if not os.path.islink(p)] + list(setup.python_ro) + list(setup.extra_ro)
    ro, listable = mounts.split_hidden(ro, list(spec.hidden)) if spec.hidden else (ro, [])
    return ro, [spec.scratch], devices, listable


def _runner(setup: Setup, spec: RunSpec, body, tier1: bool) -> None:
    if not tier1:
        if setup.root:
            kernel.drop_bounding_set()
            kernel.drop_to(setup.uid, setup.gid)
            kernel.set_pdeathsig(signal.SIGKILL)
            if os.getppid() != spec.zygote_pid:
                os._exit(70)
    else:
        kernel.set_pdeathsig(signal.SIGKILL)
    kernel.set_name("sandbox-run")
    os.chdir(spec.scratch)
    kernel.set_rlimits(rlimits(tier1, spec.writes_output))
    kernel.set_cpu_limit(cpu_seconds(spec.timeout))
    if setup.tier != Tier.NONE:
        if setup.landlock_abi or setup.seccomp:
            kernel.no_new_privs()
        if setup.landlock_abi:
            ro, rw, devices, listable = landlock_paths(setup, spec)
            landlock.landlock_restrict(setup.landlock_abi, ro, rw, devices, deny_tcp="loopback" not in spec.grants,
                                      exec_ok="exec" in spec.grants, list_only=listable)
        if setup.seccomp:
            program = spec.seccomp_filter
            if program is None:  # tier 2: no pid namespace, so the filter names our own pid (signals)
                program = seccomp.build_filter(sockets="none", own_pid=os.getpid())
            seccomp.install_sigsys_reporter(2)
            seccomp.load_filter(program)
    os.close(STATUS_FD)
    body()
