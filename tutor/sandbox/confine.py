"""Kernel confinement for the sandbox: namespaces, mounts, rlimits, Landlock and seccomp.

Standard library only (ctypes on glibc's exported wrappers and ``syscall``), so it
runs in the zygote (which imports nothing from ``tutor``) and in the start-up
probe, and it needs no compiled dependency: libseccomp cannot be assumed on a
learner's machine, and its per-child filter build cost about 12 ms (measured),
while the hand-written BPF below is assembled in well under a millisecond.

Nothing here decides *what* to confine; see ``zygote.py`` (per run) and
``probe.py`` (which tier this machine gets). Every function raises ``OSError``
with the failing step in its message.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import stat
import struct
import sys

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_libc.sethostname.argtypes = [ctypes.c_char_p, ctypes.c_size_t]

CLONE_THREAD = 0x00010000
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NEW_NAMESPACES = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 32, 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME = 1 << 18, 1 << 21
MNT_DETACH = 2

PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NAME = 1, 4, 15
PR_GET_SECCOMP, PR_SET_SECCOMP, PR_CAPBSET_DROP = 21, 22, 24
PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 36, 38, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECCOMP_MODE_FILTER = 2

NOBODY = 65534


def _fail(what: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}")


def _syscall(nr: int, *args: int) -> int:
    ret = _libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
    return ret


# ---------------------------------------------------------------- process basics


def prctl(option: int, arg2: int = 0, arg3: int = 0, what: str = "prctl") -> int:
    ret = _libc.prctl(option, arg2, arg3, 0, 0)
    if ret < 0:
        raise _fail(what)
    return ret


def set_pdeathsig(sig: int = 9) -> None:
    prctl(PR_SET_PDEATHSIG, sig, what="PR_SET_PDEATHSIG")


def set_name(name: str) -> None:
    buf = ctypes.create_string_buffer(name.encode()[:15])
    _libc.prctl(PR_SET_NAME, ctypes.cast(buf, ctypes.c_void_p).value or 0, 0, 0, 0)


def set_child_subreaper() -> None:
    prctl(PR_SET_CHILD_SUBREAPER, 1, what="PR_SET_CHILD_SUBREAPER")


def no_new_privs() -> None:
    prctl(PR_SET_NO_NEW_PRIVS, 1, what="PR_SET_NO_NEW_PRIVS")


_NR_CLOSE_RANGE = 436  # the same number on every architecture


def drop_to(uid: int, gid: int) -> None:
    """Give up root for good: no groups, then gid, then uid (real, effective and saved)."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise OSError(errno.EPERM, "dropping privileges did not take")
    # Changing uid resets these two; the first keeps /proc/self ours, the caller re-arms the second.
    prctl(PR_SET_DUMPABLE, 1, what="PR_SET_DUMPABLE")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_bounding_set() -> None:
    """Empty the bounding set (needs CAP_SETPCAP; a no-op without it)."""
    cap = 0
    while _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:  # stops at EINVAL (past the last) or EPERM
        cap += 1


def drop_capabilities() -> None:
    """Empty the bounding, ambient, effective, permitted and inheritable sets."""
    drop_bounding_set()
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(0x20080522, 0)
    data = (_CapData * 2)()
    if _libc.capset(ctypes.byref(header), data) != 0:
        raise _fail("capset")


# ---------------------------------------------------------------- namespaces and mounts


def unshare(flags: int) -> None:
    if _libc.unshare(flags) != 0:
        raise _fail(f"unshare({_flag_names(flags)})")


def _flag_names(flags: int) -> str:
    names = [("USER", CLONE_NEWUSER), ("NS", CLONE_NEWNS), ("PID", CLONE_NEWPID), ("NET", CLONE_NEWNET),
             ("IPC", CLONE_NEWIPC), ("UTS", CLONE_NEWUTS), ("CGROUP", CLONE_NEWCGROUP)]
    return "|".join(n for n, f in names if flags & f) or hex(flags)


def write_id_maps(uid: int, gid: int) -> None:
    """Map our own uid and gid into a fresh user namespace (the unprivileged form)."""
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {uid} 1\n")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {gid} 1\n")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    if _libc.mount(source.encode() if source else None, target.encode(), fstype.encode() if fstype else None,
                   flags, data.encode() if data else None) != 0:
        raise _fail(f"mount {fstype or source or ''} on {target}")


def umount(target: str, flags: int = MNT_DETACH) -> None:
    if _libc.umount2(target.encode(), flags) != 0:
        raise _fail(f"umount {target}")


_NR_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}


def pivot_root(new_root: str, put_old: str) -> None:
    nr = _NR_PIVOT_ROOT.get(platform.machine())
    if nr is None:
        raise OSError(errno.ENOSYS, "pivot_root: unknown architecture")
    a, b = ctypes.c_char_p(new_root.encode()), ctypes.c_char_p(put_old.encode())
    if _libc.syscall(ctypes.c_long(nr), a, b) != 0:
        raise _fail("pivot_root")


def set_hostname(name: str) -> None:
    raw = name.encode()
    if _libc.sethostname(raw, len(raw)) != 0:
        raise _fail("sethostname")


def loopback_up() -> None:
    """Bring up ``lo`` in a fresh network namespace (for lessons granted ``loopback``)."""
    import fcntl
    import socket

    SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, req + b"\0" * 22)[:18])[1]
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | IFF_UP) + b"\0" * 22)


def _locked_flags(path: str) -> int:
    """The flags a read-only remount of ``path`` must keep (the kernel refuses to clear them in a userns)."""
    f = os.statvfs(path).f_flag
    flags = 0
    for st_bit, ms_bit in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                           (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
                           (os.ST_RELATIME, MS_RELATIME)):
        if f & st_bit:
            flags |= ms_bit
    return flags


class RootPlan:
    """What the private root of a tier-1 run contains, computed once in the zygote.

    ``binds`` are host paths made visible read-only at the same place; ``links``
    are symlinks recreated as they are on the host (``/lib -> usr/lib``);
    ``files`` are small synthetic files (``/etc/passwd`` with two users).
    """

    def __init__(self, binds: list[str], links: dict[str, str], files: dict[str, str], dev_nodes: list[str],
                 masks: list[str] | None = None):
        self.binds = binds
        self.links = links
        self.files = files
        self.dev_nodes = dev_nodes
        self.masks = masks or []  # bound directories covered by an empty tmpfs (the tutor's own package)

    def as_dict(self) -> dict:
        return {"binds": self.binds, "links": self.links, "files": sorted(self.files), "dev": self.dev_nodes,
                "masks": self.masks}


DEV_NODES = ["null", "zero", "full", "random", "urandom"]
ETC_FILES = ["ld.so.cache", "nsswitch.conf"]


def python_paths() -> list[str]:
    """The directories this interpreter loads code from: its prefixes and site-packages.

    Source checkouts on ``sys.path`` (editable installs) are left out on purpose:
    the sandbox needs torch, not the tutor or its lessons. The one exception is the
    ``capstone`` package, which the capstone's drills import; it holds only the
    model code a learner reads anyway, so it is shown read-only wherever it lives.
    """
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              os.path.dirname(os.path.realpath(sys.executable))}
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if os.path.basename(real) in ("site-packages", "dist-packages") or any(
                real == p or real.startswith(p.rstrip("/") + "/") for p in (sys.base_prefix, sys.prefix)):
            wanted.add(entry)
    wanted.update(_capstone_dirs())
    return sorted({p for p in wanted if p and os.path.isdir(p)})


def hidden_dirs(paths: list[str]) -> list[str]:
    """The tutor's own package where it lies inside a directory the sandbox shows (an installed wheel).

    It holds the built-in course, solutions and checks included: a snippet must not be
    able to read the answers. In a source checkout it lies outside every bound path.
    """
    tutor_dir = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    return [tutor_dir] if any(_below(tutor_dir, os.path.realpath(p)) for p in paths) else []


def _below(path: str, root: str) -> bool:
    return path != root and path.startswith(root.rstrip("/") + "/")


def without(paths: list[str], hidden: list[str]) -> list[str]:
    """``paths`` with each hidden directory cut out, for Landlock (whose rules can only add).

    A path that contains a hidden directory is replaced by its entries, recursively down
    the hidden directory's branch, leaving that one out.
    """
    out: list[str] = []
    for path in paths:
        inside = [h for h in hidden if _below(h, os.path.realpath(path))]
        if not inside:
            if not any(os.path.realpath(path) == h for h in hidden):
                out.append(path)
            continue
        try:
            entries = sorted(os.listdir(path))
        except OSError:
            continue
        out.extend(without([os.path.join(path, e) for e in entries], hidden))
    return out


def _capstone_dirs() -> list[str]:
    import importlib.util

    try:
        spec = importlib.util.find_spec("capstone")  # locates the package without importing it
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec else []


def _chain(path: str, links: dict[str, str], targets: set[str]) -> str:
    """Resolve ``path`` component by component, noting symlinks to recreate; return the real path."""
    parts = [p for p in path.split("/") if p]
    current = ""
    for i, part in enumerate(parts):
        candidate = f"{current}/{part}"
        if os.path.islink(candidate):
            target = os.readlink(candidate)
            links[candidate] = target
            resolved = os.path.realpath(candidate)
            rest = "/".join(parts[i + 1:])
            return _chain(f"{resolved}/{rest}" if rest else resolved, links, targets)
        current = candidate
    targets.add(current or "/")
    return current or "/"


def build_plan(extra_ro: list[str] | None = None) -> RootPlan:
    links: dict[str, str] = {}
    wanted: set[str] = set()
    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            links[top] = os.readlink(top)
        elif os.path.isdir(top):
            wanted.add(top)
    for path in python_paths() + list(extra_ro or []) + ["/etc/alternatives", "/sys/devices/system/cpu"]:
        if os.path.exists(path):
            _chain(os.path.abspath(path), links, wanted)
    for name in ETC_FILES:
        if os.path.isfile(f"/etc/{name}") and not os.path.islink(f"/etc/{name}"):
            wanted.add(f"/etc/{name}")
    if os.path.islink("/etc/localtime"):
        links["/etc/localtime"] = os.readlink("/etc/localtime")
    # drop paths inside another bound path
    binds: list[str] = []
    for path in sorted(wanted, key=lambda p: (p.count("/"), p)):
        if not any(path == b or path.startswith(b.rstrip("/") + "/") for b in binds):
            binds.append(path)
    # links inside bound paths come with the bind
    links = {k: v for k, v in links.items() if not any(k.startswith(b.rstrip("/") + "/") for b in binds)}
    files = {
        "/etc/passwd": "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                       f"sandbox:x:{os.getuid() if os.getuid() else NOBODY}:{os.getgid() if os.getuid() else NOBODY}"
                       ":sandbox:/tmp:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        "/etc/group": "root:x:0:\nnogroup:x:65534:\n",
        "/etc/hosts": "127.0.0.1 localhost\n::1 localhost\n",
        "/etc/hostname": "sandbox\n",
    }
    dev = [n for n in DEV_NODES if os.path.exists(f"/dev/{n}")]
    return RootPlan(binds, links, files, dev, hidden_dirs(binds))


def _mkdirs(path: str) -> None:
    try:
        os.makedirs(path, mode=0o755, exist_ok=True)
    except OSError as exc:
        raise OSError(exc.errno, f"mkdir {path}: {exc.strerror}") from None


def _bind_ro(source: str, target: str, recursive: bool = True) -> None:
    if os.path.isdir(source):
        _mkdirs(target)
    else:
        _mkdirs(os.path.dirname(target))
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    mount(source, target, None, MS_BIND | (MS_REC if recursive else 0))
    mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _locked_flags(target))


def build_root(plan: RootPlan, base: str, uid: int, gid: int, scratch_bytes: int, scratch_inodes: int,
               shm: bool, exec_ok: bool) -> None:
    """Build the private root at ``base`` and switch to it (caller: pid 1 of a fresh pid and mount ns).

    Afterwards ``/`` holds only read-only binds of system and Python directories,
    a synthetic ``/etc``, a few device nodes, a fresh ``/proc`` for this pid
    namespace and a size-capped tmpfs at ``/tmp`` (the scratch directory and cwd).
    """
    os.umask(0o022)  # the zygote's 077 would make the skeleton unreachable for the sandbox uid
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    # Hold every bind source open first: the tmpfs about to cover ``base`` would hide any
    # source that lives below it (a checkout or venv under /tmp, say).
    sources = {path: os.open(path, os.O_PATH | os.O_CLOEXEC) for path in plan.binds}
    mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755")
    # The scratch tmpfs goes in before the binds: mounted after, it would cover any bind
    # below /tmp (a checkout or venv under /tmp) and hide the files torch imports lazily.
    _mkdirs(base + "/tmp")
    mount("tmpfs", base + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | (0 if exec_ok else MS_NOEXEC),
          f"size={scratch_bytes},nr_inodes={scratch_inodes},mode=0700,uid={uid},gid={gid}")
    for path, target in plan.links.items():
        _mkdirs(base + os.path.dirname(path))
        os.symlink(target, base + path)
    for path in plan.binds:
        _bind_ro(f"/proc/self/fd/{sources[path]}", base + path)
        os.close(sources[path])
    for path in plan.masks:  # an empty, read-only directory where the tutor's package (and its course) was
        if os.path.isdir(base + path):
            mount("tmpfs", base + path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
                  "size=4k,nr_inodes=8,mode=0555")
    for path, text in plan.files.items():
        _mkdirs(base + os.path.dirname(path))
        with open(base + path, "w") as f:
            f.write(text)
    _mkdirs(base + "/dev")
    for name in plan.dev_nodes:
        target = f"{base}/dev/{name}"
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
        mount(f"/dev/{name}", target, None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{base}/dev/{name}")
    _mkdirs(base + "/dev/shm")
    if shm:
        mount("tmpfs", base + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
              f"size={scratch_bytes},nr_inodes={scratch_inodes},mode=0700,uid={uid},gid={gid}")
    _mkdirs(base + "/proc")
    mount("proc", base + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.chdir(base)
    pivot_root(".", ".")
    umount(".", MNT_DETACH)
    os.chdir("/")
    mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


# ---------------------------------------------------------------- rlimits


def set_rlimits(limits: dict[int, int]) -> None:
    for what, value in limits.items():
        soft, hard = resource.getrlimit(what)
        new_hard = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(what, (min(value, new_hard), new_hard))


def uid_task_count(uid: int) -> int:
    """How many tasks (threads included) the processes of ``uid`` have now: what RLIMIT_NPROC counts.

    A process shows as owned by root in /proc when it is not dumpable (ssh-agent, say); such
    processes are missed, which only makes a budget computed from this count smaller.
    """
    count = 0
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    count += int(f.read().rsplit(b")", 1)[1].split()[17])  # num_threads
            except (OSError, ValueError, IndexError):
                continue
    return count


def system_task_count() -> int:
    """All tasks on the system, from /proc/loadavg (one read): a cheap sign that the count above moved."""
    try:
        with open("/proc/loadavg", "rb") as f:
            return int(f.read().split()[3].split(b"/")[1])
    except (OSError, ValueError, IndexError):
        return 0


def set_cpu_limit(seconds: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    new_hard = seconds + 1 if hard == resource.RLIM_INFINITY else min(seconds + 1, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (min(seconds, new_hard), new_hard))


# ---------------------------------------------------------------- Landlock

_NR_LANDLOCK_CREATE, _NR_LANDLOCK_ADD_RULE, _NR_LANDLOCK_RESTRICT = 444, 445, 446  # same on every arch
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1

FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1, 2, 4, 8
FS_REMOVE_DIR, FS_REMOVE_FILE, FS_MAKE_CHAR, FS_MAKE_DIR = 16, 32, 64, 128
FS_MAKE_REG, FS_MAKE_SOCK, FS_MAKE_FIFO, FS_MAKE_BLOCK, FS_MAKE_SYM = 256, 512, 1024, 2048, 4096
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2

_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
READ_ONLY = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


LANDLOCK_ABI_CAP_ENV = "PYTORCH_TUTOR_LANDLOCK_ABI_CAP"


def landlock_abi() -> int:
    """The Landlock ABI version, or 0 when the kernel has none (or it is disabled).

    ``$PYTORCH_TUTOR_LANDLOCK_ABI_CAP`` lowers it (never raises it): the tests use it to
    exercise the fallbacks of older kernels (signal scoping needs ABI 6, Linux 6.12) on a
    new one. The client starts the probe and the zygote with a fixed environment, so only
    a wrapper around the interpreter can set it, and it can only weaken what the kernel
    offers, never claim more.
    """
    ret = _syscall(_NR_LANDLOCK_CREATE, 0, 0, LANDLOCK_CREATE_RULESET_VERSION)
    abi = ret if ret > 0 else 0
    cap = os.environ.get(LANDLOCK_ABI_CAP_ENV, "")
    if cap.isdigit():
        abi = min(abi, int(cap))
    return abi


def landlock_fs_rights(abi: int) -> int:
    return _FS_BY_ABI.get(abi, (1 << 16) - 1) if abi else 0


def landlock_restrict(abi: int, read_only: list, read_write: list, devices: list, deny_tcp: bool = True,
                      scope: bool = True, exec_ok: bool = False) -> dict:
    """Allow only the given paths (str, or an fd already open on the path) and restrict ourselves.

    Returns what was enforced, for the tier report. Paths that do not exist are skipped.
    """
    if abi <= 0:
        raise OSError(errno.EOPNOTSUPP, "Landlock is not available")
    handled = landlock_fs_rights(abi)
    attr = _RulesetAttr(handled, 0, 0)
    size = 8
    if abi >= 4 and deny_tcp:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
        size = 16
    if abi >= 6 and scope:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    ruleset = _syscall(_NR_LANDLOCK_CREATE, ctypes.addressof(attr), size, 0)
    if ruleset < 0:
        raise _fail("landlock_create_ruleset")
    rw_rights = handled & ~(FS_MAKE_CHAR | FS_MAKE_BLOCK)
    if not exec_ok:
        rw_rights &= ~FS_EXECUTE
    dev_rights = (FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV) & handled
    try:
        for paths, rights in ((read_only, READ_ONLY & handled), (read_write, rw_rights), (devices, dev_rights)):
            for path in paths:
                _add_path_rule(ruleset, path, rights)
        if _syscall(_NR_LANDLOCK_RESTRICT, ruleset, 0) != 0:
            raise _fail("landlock_restrict_self")
    finally:
        os.close(ruleset)
    return {"abi": abi, "tcp": bool(attr.handled_access_net), "scoped": bool(attr.scoped)}


def _add_path_rule(ruleset: int, path, rights: int) -> None:
    if isinstance(path, int):
        fd, owned = path, False
    else:
        try:
            fd, owned = os.open(path, os.O_PATH | os.O_CLOEXEC), True
        except OSError:
            return
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        rule = _PathBeneath(rights, fd)
        if _syscall(_NR_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, ctypes.addressof(rule), 0) != 0:
            raise _fail(f"landlock_add_rule {path}")
    finally:
        if owned:
            os.close(fd)


# ---------------------------------------------------------------- seccomp

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}

# Syscalls denied with EPERM in every sandboxed run (see the research notes' deny list).
_DENY = {
    "x86_64": {
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438, "kcmp": 312,
        "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "mount_setattr": 442, "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321,
        "perf_event_open": 298, "userfaultfd": 323, "kexec_load": 246, "kexec_file_load": 320,
        "init_module": 175, "finit_module": 313, "delete_module": 176, "acct": 163, "swapon": 167,
        "swapoff": 168, "reboot": 169, "syslog": 103, "quotactl": 179, "quotactl_fd": 443, "sethostname": 170,
        "setdomainname": 171, "uselib": 134, "vhangup": 153, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_by_handle_at": 304, "name_to_handle_at": 303, "mbind": 237,
        "migrate_pages": 256, "move_pages": 279, "personality": 135,
        # SysV IPC and POSIX message queues: host-wide objects outside every rlimit (tier 2 has no ipc
        # namespace, so a snippet would read and consume the host's segments and queues, and leave
        # objects that pin memory past RLIMIT_AS and past the tutor's exit). No torch path uses them:
        # DataLoader workers share tensors through /dev/shm files and fd passing.
        "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64, "semop": 65, "semctl": 66,
        "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "mq_open": 240,
        "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245,
        # other processes' memory through a pidfd
        "process_madvise": 440, "process_mrelease": 448,
    },
    "aarch64": {
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438, "kcmp": 272,
        "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "mount_setattr": 442, "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280,
        "perf_event_open": 241, "userfaultfd": 282, "kexec_load": 104, "kexec_file_load": 294,
        "init_module": 105, "finit_module": 273, "delete_module": 106, "acct": 89, "swapon": 224,
        "swapoff": 225, "reboot": 142, "syslog": 116, "quotactl": 60, "quotactl_fd": 443, "sethostname": 161,
        "setdomainname": 162, "vhangup": 58, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_by_handle_at": 265, "name_to_handle_at": 264, "mbind": 235,
        "migrate_pages": 238, "move_pages": 239, "personality": 92,
        "shmget": 194, "shmat": 196, "shmctl": 195, "shmdt": 197, "semget": 190, "semop": 193, "semctl": 191,
        "semtimedop": 192, "msgget": 186, "msgsnd": 189, "msgrcv": 188, "msgctl": 187, "mq_open": 180,
        "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185,
        "process_madvise": 440, "process_mrelease": 448,
    },
}
# Syscalls that act on the process named by their first argument: allowed only with 0 (the caller).
# Without a pid namespace (tier 2) another pid reaches every process of the same uid: the learner's
# editor (prlimit64 lowering its CPU limit), the tutor (RLIMIT_FSIZE 0), the zygote and the pre-forked
# runners (affinity, scheduling class). 0 rather than "our own pid" because these calls take thread ids
# and every thread has its own; glibc's setrlimit/getrlimit and torch/OpenMP's sched_setaffinity(0, ...)
# pass 0. The reading counterparts (getpriority, sched_getaffinity, ...) stay allowed.
_SELF_ONLY = {
    "x86_64": {"prlimit64": 302, "sched_setaffinity": 203, "sched_setscheduler": 144, "sched_setparam": 142,
               "sched_setattr": 314, "get_robust_list": 274},
    "aarch64": {"prlimit64": 261, "sched_setaffinity": 122, "sched_setscheduler": 119, "sched_setparam": 118,
                "sched_setattr": 274, "get_robust_list": 100},
}
_SPECIAL = {
    "x86_64": {"socket": 41, "ioctl": 16, "clone": 56, "clone3": 435, "fork": 57, "vfork": 58, "execve": 59,
               "execveat": 322, "kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129,
               "rt_tgsigqueueinfo": 297, "pidfd_open": 434, "pidfd_send_signal": 424, "fcntl": 72,
               "setpriority": 141, "ioprio_set": 251, "memfd_create": 319, "memfd_secret": 447, "sendmsg": 46,
               "sendmmsg": 307},
    "aarch64": {"socket": 198, "ioctl": 29, "clone": 220, "clone3": 435, "execve": 221, "execveat": 281,
                "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240,
                "pidfd_open": 434, "pidfd_send_signal": 424, "fcntl": 25, "setpriority": 140, "ioprio_set": 30,
                "memfd_create": 279, "memfd_secret": 447, "sendmsg": 211, "sendmmsg": 269},
}

_LD_W_ABS, _JEQ, _JSET, _JGE, _RET = 0x20, 0x15, 0x45, 0x35, 0x06
_ALLOW, _KILL_PROCESS, _TRAP = 0x7FFF0000, 0x80000000, 0x00030000
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902  # ioctl forms of F_SETOWN (sockets)
F_SETOWN, F_SETSIG, F_SETOWN_EX = 8, 10, 15
PRIO_PROCESS, IOPRIO_WHO_PROCESS = 0, 1
CLONE_FILES = 0x00000400


def _errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


def seccomp_supported() -> bool:
    return platform.machine() in AUDIT_ARCH


def build_filter(sockets: str = "unix", processes: bool = False, exec_ok: bool = False,
                 own_pid: int | None = None, deny_namespaces_only: bool = False) -> bytes:
    """Assemble the seccomp BPF program.

    ``sockets``: "none" (tier 2), "unix" (tier 1), "inet" (tier 1 with the loopback grant).
    ``processes``: allow fork; otherwise only threads (clone with CLONE_THREAD).
    ``own_pid``: the runner shares the host's pid namespace (tier 2): signals may reach only
    this process (kill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo; tkill, pidfds and SIGIO
    ownership are refused, whatever Landlock can scope), threads must share the fd table
    (so the zygote sees every open file in /proc/PID/fd), and memfds and fd passing are
    refused (memory and files held outside RLIMIT_AS and the scratch quota).
    ``deny_namespaces_only``: a filter that only refuses new namespaces (tests use it to
    emulate a host that forbids them).

    Every refusal is an errno (EPERM, or ENOSYS where libc should fall back), so the
    snippet gets an ordinary Python exception. The one exception is a system call of
    another ABI (i386 ``int 0x80``), whose numbers mean other calls: SECCOMP_RET_TRAP,
    which :func:`install_sigsys_reporter` turns into a message naming the call.
    """
    arch = platform.machine()
    if arch not in AUDIT_ARCH:
        raise OSError(errno.ENOSYS, f"seccomp filter: unsupported architecture {arch}")
    sp = _SPECIAL[arch]
    prog: list[tuple[int, int, int, int]] = []

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> None:
        prog.append((code, jt, jf, k))

    def ret(k: int) -> None:
        op(_RET, k)

    op(_LD_W_ABS, 4)  # arch
    op(_JEQ, AUDIT_ARCH[arch], 1, 0)
    # (the namespaces-only filter emulates a host policy: it lets other ABIs through to the sandbox's own filter,
    # which traps them; seccomp would otherwise pick its harsher KILL for both)
    ret(_ALLOW if deny_namespaces_only else _TRAP)
    op(_LD_W_ABS, 0)  # nr
    if arch == "x86_64":
        op(_JGE, 0x40000000, 0, 1)  # the x32 ABI
        ret(_errno(errno.EPERM))

    if deny_namespaces_only:
        op(_JEQ, _DENY[arch]["unshare"], 0, 1)
        ret(_errno(errno.EPERM))
        op(_JEQ, _DENY[arch]["setns"], 0, 1)
        ret(_errno(errno.EPERM))
        op(_JEQ, sp["clone3"], 0, 1)
        ret(_errno(errno.ENOSYS))
        op(_JEQ, sp["clone"], 0, 4)
        op(_LD_W_ABS, 16)
        op(_JSET, NEW_NAMESPACES, 0, 1)
        ret(_errno(errno.EPERM))
        ret(_ALLOW)
        ret(_ALLOW)
        return _pack(prog)

    for nr in sorted(_DENY[arch].values()):
        op(_JEQ, nr, 0, 1)
        ret(_errno(errno.EPERM))
    op(_JEQ, sp["clone3"], 0, 1)  # glibc falls back to clone(), whose flags we can see
    ret(_errno(errno.ENOSYS))
    if not processes:
        for name in ("fork", "vfork"):
            if name in sp:
                op(_JEQ, sp[name], 0, 1)
                ret(_errno(errno.EPERM))
    if not exec_ok:
        for name in ("execve", "execveat"):
            op(_JEQ, sp[name], 0, 1)
            ret(_errno(errno.EPERM))

    eperm = (_RET, 0, 0, _errno(errno.EPERM))
    allow = (_RET, 0, 0, _ALLOW)
    # other processes: only pid 0 (the caller) for the calls that change a process's limits or scheduling
    for nr in _SELF_ONLY[arch].values():
        _guarded(prog, nr, [(_LD_W_ABS, 0, 0, 16), (_JEQ, 1, 0, 0), eperm, allow])
    # setpriority(which, who, prio) and ioprio_set(which, who, prio): only (the calling thread, 0);
    # a process group or a whole uid ("which" = PGRP/USER) would reach every process of the user
    for name, which in (("setpriority", PRIO_PROCESS), ("ioprio_set", IOPRIO_WHO_PROCESS)):
        _guarded(prog, sp[name], [(_LD_W_ABS, 0, 0, 16), (_JEQ, 0, 2, which), (_LD_W_ABS, 0, 0, 24),
                                  (_JEQ, 1, 0, 0), eperm, allow])

    # clone: never new namespaces; without `processes`, threads only (in tier 2 sharing the fd table)
    block = [(_LD_W_ABS, 0, 0, 16), (_JSET, 0, 1, NEW_NAMESPACES)]
    if processes:
        tail = [eperm, allow]
    elif own_pid is not None:
        tail = [eperm, (_JSET, 0, 1, CLONE_THREAD), (_JSET, 1, 0, CLONE_FILES), eperm, allow]
    else:
        tail = [eperm, (_JSET, 1, 0, CLONE_THREAD), eperm, allow]
    _guarded(prog, sp["clone"], block + tail)

    # socket: by family
    # The loopback grant also needs AF_NETLINK: gloo's TCP transport (and glibc's getifaddrs)
    # asks the kernel for the interfaces over netlink. Inside tier 1's own network namespace,
    # without capabilities, that shows and changes nothing but the namespace's own `lo`.
    families = {"none": (), "unix": (AF_UNIX,), "inet": (AF_UNIX, AF_INET, AF_INET6, AF_NETLINK)}[sockets]
    body = [(_LD_W_ABS, 0, 0, 16)]
    for i, fam in enumerate(families):
        body.append((_JEQ, len(families) - i, 0, fam))
    body += [(_RET, 0, 0, _errno(errno.EPERM)), (_RET, 0, 0, _ALLOW)]
    if not families:
        body = [(_RET, 0, 0, _errno(errno.EPERM))]
    _guarded(prog, sp["socket"], body)

    # ioctl: no faking terminal input, no SIGIO ownership (the socket form of F_SETOWN)
    _guarded(prog, sp["ioctl"], [(_LD_W_ABS, 0, 0, 24), (_JEQ, 4, 0, TIOCSTI), (_JEQ, 3, 0, TIOCLINUX),
                                 (_JEQ, 2, 0, FIOSETOWN), (_JEQ, 1, 0, SIOCSPGRP), allow, eperm])

    if own_pid is not None:
        # No pid namespace: a signal could reach any process of the uid, and Landlock scopes signals
        # only from ABI 6 on (and not every route on every kernel), so this holds in every tier-2 run
        # whatever Landlock can do. kill(pid, sig) only to ourselves (our pid, or 0: our own process
        # group, which setsid made ours alone); tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo only
        # into our own thread group; tkill (a bare tid) and pidfds (pidfd_open, or a /proc/PID
        # directory fd given to pidfd_send_signal) not at all.
        _guarded(prog, sp["kill"], [(_LD_W_ABS, 0, 0, 16), (_JEQ, 2, 0, own_pid), (_JEQ, 1, 0, 0), eperm, allow])
        for name in ("tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
            _guarded(prog, sp[name], [(_LD_W_ABS, 0, 0, 16), (_JEQ, 1, 0, own_pid), eperm, allow])
        # fcntl F_SETOWN / F_SETOWN_EX / F_SETSIG: SIGIO (or any signal) to another process when a pipe
        # or socket becomes ready
        _guarded(prog, sp["fcntl"], [(_LD_W_ABS, 0, 0, 24), (_JEQ, 3, 0, F_SETOWN), (_JEQ, 2, 0, F_SETSIG),
                                     (_JEQ, 1, 0, F_SETOWN_EX), allow, eperm])
        # tkill and pidfds (signals); memfds (memory that RLIMIT_AS does not count); sendmsg (SCM_RIGHTS:
        # an fd in flight in a socketpair holds a scratch file that no /proc/PID/fd listing shows)
        for name in ("tkill", "pidfd_open", "pidfd_send_signal", "memfd_create", "memfd_secret", "sendmsg",
                     "sendmmsg"):
            op(_JEQ, sp[name], 0, 1)
            ret(_errno(errno.EPERM))
    ret(_ALLOW)
    return _pack(prog)


def _guarded(prog: list, nr: int, body: list) -> None:
    """``if nr == <nr>: <body>`` where the body ends in returns (it reloads the accumulator)."""
    prog.append((_JEQ, 0, len(body), nr))
    prog.extend(body)


def _pack(prog: list) -> bytes:
    if len(prog) > 4096:
        raise ValueError("seccomp filter too long")
    return b"".join(struct.pack("<HBBI", code, jt, jf, k) for code, jt, jf, k in prog)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_filter(program: bytes) -> None:
    """Install a filter built by :func:`build_filter` (needs no_new_privs or CAP_SYS_ADMIN)."""
    buf = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.addressof(buf))
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        raise _fail("seccomp")


# ---------------------------------------------------------------- a refused system call, by name

SIGSYS = 31  # x86_64 and aarch64
_SA_SIGINFO, _SA_RESETHAND = 0x4, 0x80000000
_I386_NAMES = {1: "exit", 2: "fork", 3: "read", 4: "write", 5: "open", 6: "close", 11: "execve", 20: "getpid",
               26: "ptrace", 37: "kill", 45: "brk", 54: "ioctl", 90: "mmap", 102: "socketcall", 117: "ipc",
               120: "clone", 125: "mprotect", 190: "vfork", 192: "mmap2", 252: "exit_group", 359: "socket"}
_ARCH_NAMES = {0x40000003: "i386", 0xC000003E: "x86_64", 0xC00000B7: "aarch64"}


class _Sigaction(ctypes.Structure):  # glibc's struct sigaction (x86_64 and aarch64)
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16), ("flags", ctypes.c_int),
                ("restorer", ctypes.c_void_p)]


def syscall_name(nr: int, arch: int) -> str:
    """A readable name for system call ``nr`` of audit architecture ``arch`` (the number when unknown)."""
    abi = _ARCH_NAMES.get(arch, hex(arch))
    if abi == "i386":
        name = _I386_NAMES.get(nr)
    else:
        tables = {"x86_64": "x86_64", "aarch64": "aarch64"}
        table = tables.get(abi)
        name = None
        if table:
            for group in (_DENY, _SPECIAL, _SELF_ONLY):
                name = next((k for k, v in group[table].items() if v == nr), None) or name
    return f"{name} ({abi} system call {nr})" if name else f"{abi} system call {nr}"


def _on_sigsys(signum: int, info: int, context: int) -> None:
    # Runs as the signal handler of a trapped system call (SECCOMP_RET_TRAP): name the call on the
    # captured stderr, then die of SIGSYS as the filter meant (SA_RESETHAND put the default back).
    # The siginfo of a seccomp trap carries the call's number and ABI, but only for the process itself:
    # its parent sees nothing but "killed by SIGSYS".
    try:
        nr = ctypes.c_int.from_address(info + 24).value  # si_syscall
        arch = ctypes.c_uint.from_address(info + 28).value  # si_arch
        os.write(_sigsys_fd, (f"\nsandbox: the system call {syscall_name(nr, arch)} is forbidden here; "
                              "the snippet was stopped.\n").encode())
    except BaseException:  # noqa: BLE001 - never raise out of a signal handler
        pass
    os.kill(os.getpid(), SIGSYS)


_SIGSYS_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(_on_sigsys)
_sigsys_fd = 2


def install_sigsys_reporter(fd: int = 2) -> None:
    """Have a trapped system call named on ``fd`` (the captured output) before the process dies of SIGSYS."""
    global _sigsys_fd
    _sigsys_fd = fd
    _libc.sigaction.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    action = _Sigaction()
    action.handler = ctypes.cast(_SIGSYS_HANDLER, ctypes.c_void_p).value
    action.flags = _SA_SIGINFO | _SA_RESETHAND
    if _libc.sigaction(SIGSYS, ctypes.byref(action), None) != 0:
        raise _fail("sigaction(SIGSYS)")


# ---------------------------------------------------------------- an on-disk scratch directory (tiers 2 and 3)
#
# Without a mount namespace the scratch directory is an ordinary host directory that the snippet
# owns, so everything below must hold against a tree the snippet shaped on purpose: directories
# it made unreadable or unsearchable for itself (0300, 0000), chains deeper than any descriptor
# limit or the recursion limit (shutil.rmtree and os.fwalk fail on both), symlinks where a
# directory was a moment ago, and files it keeps after unlinking them. So the walk is iterative
# and holds one directory descriptor at a time (it climbs back through ".." and checks that it
# arrived where it came from), never follows a symlink, and, as the owner (or root), gives a
# directory back the owner's rwx bits when the snippet took them away.

_DIR_PATH = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_READ = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC  # only ever through /proc/self/fd/N (no lookup)


class TreeChanged(OSError):
    """A directory moved while the walk was inside it (only a live run can do that)."""


def _owner_rights(fd: int) -> None:
    """Give the directory behind ``fd`` its owner's rwx bits (we are its owner, or root)."""
    os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(os.fstat(fd).st_mode) | 0o700)


def _readable(path_fd: int) -> int:
    """A readable descriptor on the directory behind an O_PATH descriptor (no path lookup involved)."""
    try:
        return os.open(f"/proc/self/fd/{path_fd}", _DIR_READ)
    except PermissionError:
        _owner_rights(path_fd)
        return os.open(f"/proc/self/fd/{path_fd}", _DIR_READ)


def _open_dir_at(parent: int | None, name: str) -> int:
    """Open directory ``name`` (below ``parent``, or an absolute path) for reading, never through a symlink."""
    try:
        path_fd = os.open(name, _DIR_PATH, dir_fd=parent)
    except PermissionError:
        if parent is None:
            raise
        _owner_rights(parent)  # no search permission on the parent
        path_fd = os.open(name, _DIR_PATH, dir_fd=parent)
    try:
        return _readable(path_fd)
    finally:
        os.close(path_fd)


def _at(fd: int, call, *args, **kwargs):
    """``call(..., dir_fd=fd)``, giving the directory its owner's rights back once if that is what failed."""
    try:
        return call(*args, dir_fd=fd, **kwargs)
    except PermissionError:
        _owner_rights(fd)
        return call(*args, dir_fd=fd, **kwargs)


def walk_tree(top: str, on_entry=None, remove: bool = False) -> None:
    """Visit (``on_entry(stat_result)``) and optionally remove everything below ``top``, iteratively.

    Entries that vanish meanwhile are skipped; a directory that moved while the walk was in
    it raises :class:`TreeChanged` (the walk never climbs anywhere it did not come from).
    Directories on another filesystem are neither entered nor removed.
    """
    fd = _open_dir_at(None, top)
    try:
        here = os.fstat(fd)
        dev = here.st_dev
        stack: list[tuple[tuple[int, int], list[str], str]] = []
        pending = os.listdir(fd)
        while True:
            if pending:
                name = pending.pop()
                try:
                    st = _at(fd, os.stat, name, follow_symlinks=False)
                except (FileNotFoundError, NotADirectoryError):
                    continue
                if on_entry is not None:
                    on_entry(st)
                if stat.S_ISDIR(st.st_mode):
                    if st.st_dev != dev:
                        continue
                    try:
                        child = _open_dir_at(fd, name)
                    except (FileNotFoundError, NotADirectoryError):
                        continue
                    seen = os.fstat(child)
                    if (seen.st_dev, seen.st_ino) != (st.st_dev, st.st_ino):
                        os.close(child)
                        raise TreeChanged(errno.EAGAIN, f"{name} changed while being walked")
                    stack.append(((here.st_dev, here.st_ino), pending, name))
                    os.close(fd)
                    fd, here = child, seen
                    pending = os.listdir(fd)
                elif remove:
                    try:
                        _at(fd, os.unlink, name)
                    except FileNotFoundError:
                        pass
                continue
            if not stack:
                break
            expected, pending, name = stack.pop()
            up = _at(fd, os.open, "..", _DIR_PATH)
            try:
                parent = _readable(up)
            finally:
                os.close(up)
            os.close(fd)
            fd, here = parent, os.fstat(parent)
            if (here.st_dev, here.st_ino) != expected:
                raise TreeChanged(errno.EAGAIN, "a directory moved while being walked")
            if remove:
                try:
                    _at(fd, os.rmdir, name)
                except (FileNotFoundError, OSError) as exc:
                    if exc.errno not in (errno.ENOENT, errno.ENOTEMPTY, errno.EBUSY):
                        raise
    finally:
        os.close(fd)


def remove_tree(path: str) -> bool:
    """Remove ``path`` and everything below it whatever the snippet did to it; True when it is gone.

    Never raises: it is cleanup, run from the zygote's loop and from the client at exit.
    """
    try:
        os.lstat(path)
    except OSError:
        return True
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            walk_tree(path, remove=True)
            os.rmdir(path)
        else:
            os.unlink(path)
    except OSError:
        pass
    except RecursionError:  # cannot happen with the walk above; a cleanup must not kill its caller anyway
        pass
    return not os.path.lexists(path)


class OverQuota(Exception):
    pass


class ScratchUsage:
    """What one tier-2 run holds on disk: its scratch tree, plus files it keeps after unlinking them.

    A directory walk alone is blind to a file that is unlinked while still open or mapped
    (it keeps its blocks until the last reference goes), so this also looks at the runner's
    /proc/PID/fd and /proc/PID/maps. That covers every reference a tier-2 runner can hold:
    it is a single process whose threads must share its fd table (seccomp: clone needs
    CLONE_FILES), and it cannot pass descriptors (sendmsg is refused) or reach io_uring.
    A deleted file held only by a mapping cannot be measured without CAP_SYS_ADMIN (its
    /proc/PID/map_files link), so it counts as the largest file RLIMIT_FSIZE lets it be.

    Why not the filesystem's free space (statvfs)? The scratch shares its filesystem with
    the host, whose own writes would be charged to the snippet. Why not a size-capped
    filesystem? Mounting one needs privileges tier 2 does not have (tier 1 uses a tmpfs).
    """

    def __init__(self, scratch: str, max_bytes: int, max_entries: int, file_size: int):
        self.scratch = scratch.rstrip("/")
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.file_size = file_size
        self.bytes = 0
        self.entries = 0
        self.seen: set[int] = set()
        self.dev = -1

    def add(self, st) -> None:
        if st.st_ino in self.seen and st.st_dev == self.dev:
            return
        self.seen.add(st.st_ino)
        self.entries += 1
        self.bytes += st.st_blocks * 512
        if self.entries > self.max_entries or self.bytes > self.max_bytes:
            raise OverQuota()

    def _ours(self, path: str) -> bool:
        return path.startswith(self.scratch + "/")

    def measure(self, pid: int | None) -> None:
        """Raise :class:`OverQuota` when over; :class:`OSError` when the run could not be measured."""
        self.dev = os.stat(self.scratch, follow_symlinks=False).st_dev
        walk_tree(self.scratch, on_entry=self.add)
        if pid is None:
            return
        fd_dir = f"/proc/{pid}/fd"
        for name in os.listdir(fd_dir):
            link = f"{fd_dir}/{name}"
            try:
                target = os.readlink(link)
            except FileNotFoundError:
                continue
            except OSError:
                target = None  # too long to name (a deep tree): judge by the filesystem alone
            if target is not None and not self._ours(target):
                continue
            try:
                st = os.stat(link)
            except OSError:
                continue
            if st.st_dev == self.dev and stat.S_ISREG(st.st_mode):
                self.add(st)
        with open(f"/proc/{pid}/maps", "rb") as f:
            maps = f.read()
        needle = (self.scratch + "/").encode()
        if needle not in maps:
            return
        for line in maps.splitlines():
            fields = line.split(None, 5)
            if len(fields) < 6 or not fields[5].startswith(needle) or not fields[5].endswith(b" (deleted)"):
                continue
            inode = int(fields[4])
            if inode in self.seen:
                continue
            try:  # exact where we may (root): the mapping's own link to the file
                st = os.stat(f"/proc/{pid}/map_files/{fields[0].decode()}")
                self.add(st)
                continue
            except OSError:
                pass
            self.seen.add(inode)
            self.entries += 1
            self.bytes += self.file_size
            if self.entries > self.max_entries or self.bytes > self.max_bytes:
                raise OverQuota()


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

CGROUP_RUN_MEMORY = 3 << 30  # per run, like RLIMIT_AS; memory.swap.max 0 so it cannot be dodged into swap


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
