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

    def __init__(self, binds: list[str], links: dict[str, str], files: dict[str, str], dev_nodes: list[str]):
        self.binds = binds
        self.links = links
        self.files = files
        self.dev_nodes = dev_nodes

    def as_dict(self) -> dict:
        return {"binds": self.binds, "links": self.links, "files": sorted(self.files), "dev": self.dev_nodes}


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
    return RootPlan(binds, links, files, dev)


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


def landlock_abi() -> int:
    """The Landlock ABI version, or 0 when the kernel has none (or it is disabled)."""
    ret = _syscall(_NR_LANDLOCK_CREATE, 0, 0, LANDLOCK_CREATE_RULESET_VERSION)
    return ret if ret > 0 else 0


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
    },
}
_SPECIAL = {
    "x86_64": {"socket": 41, "ioctl": 16, "clone": 56, "clone3": 435, "fork": 57, "vfork": 58, "execve": 59,
               "execveat": 322, "kill": 62, "tkill": 200, "tgkill": 234},
    "aarch64": {"socket": 198, "ioctl": 29, "clone": 220, "clone3": 435, "execve": 221, "execveat": 281,
                "kill": 129, "tkill": 130, "tgkill": 131},
}

_LD_W_ABS, _JEQ, _JSET, _JGE, _RET = 0x20, 0x15, 0x45, 0x35, 0x06
_ALLOW, _KILL_PROCESS = 0x7FFF0000, 0x80000000
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
TIOCSTI, TIOCLINUX = 0x5412, 0x541C


def _errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


def seccomp_supported() -> bool:
    return platform.machine() in AUDIT_ARCH


def build_filter(sockets: str = "unix", processes: bool = False, exec_ok: bool = False,
                 own_pid: int | None = None, deny_namespaces_only: bool = False) -> bytes:
    """Assemble the seccomp BPF program.

    ``sockets``: "none" (tier 2), "unix" (tier 1), "inet" (tier 1 with the loopback grant).
    ``processes``: allow fork; otherwise only threads (clone with CLONE_THREAD).
    ``own_pid``: when Landlock cannot scope signals, only let kill() reach our own process.
    ``deny_namespaces_only``: a filter that only refuses new namespaces (tests use it to
    emulate a host that forbids them).
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
    ret(_KILL_PROCESS)
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

    # clone: never new namespaces; without `processes`, threads only
    block = [(_LD_W_ABS, 0, 0, 16), (_JSET, 0, 0, NEW_NAMESPACES)]
    tail: list = []
    if processes:
        block[-1] = (_JSET, 0, 1, NEW_NAMESPACES)
        tail = [(_RET, 0, 0, _errno(errno.EPERM)), (_RET, 0, 0, _ALLOW)]
    else:
        block[-1] = (_JSET, 0, 1, NEW_NAMESPACES)
        tail = [(_RET, 0, 0, _errno(errno.EPERM)), (_JSET, 1, 0, CLONE_THREAD),
                (_RET, 0, 0, _errno(errno.EPERM)), (_RET, 0, 0, _ALLOW)]
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

    # ioctl: no faking terminal input
    _guarded(prog, sp["ioctl"], [(_LD_W_ABS, 0, 0, 24), (_JEQ, 2, 0, TIOCSTI), (_JEQ, 1, 0, TIOCLINUX),
                                 (_RET, 0, 0, _ALLOW), (_RET, 0, 0, _errno(errno.EPERM))])

    if own_pid is not None:
        # kill(pid, sig) only to ourselves (pid or our own group 0); tgkill only in our thread group
        _guarded(prog, sp["kill"], [(_LD_W_ABS, 0, 0, 16), (_JEQ, 2, 0, own_pid), (_JEQ, 1, 0, 0),
                                    (_RET, 0, 0, _errno(errno.EPERM)), (_RET, 0, 0, _ALLOW)])
        _guarded(prog, sp["tgkill"], [(_LD_W_ABS, 0, 0, 16), (_JEQ, 1, 0, own_pid),
                                      (_RET, 0, 0, _errno(errno.EPERM)), (_RET, 0, 0, _ALLOW)])
        _guarded(prog, sp["tkill"], [(_RET, 0, 0, _errno(errno.EPERM))])
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
