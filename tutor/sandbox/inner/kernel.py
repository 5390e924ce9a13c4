"""Kernel primitives for the inner sandbox: libc through ctypes, syscall numbers, process basics.

Standard library only. Everything here is one system call (or a few) with its failure
turned into an ``OSError`` that names the step: prctl flags, capabilities, namespaces,
mounts and the root switch, hostnames, the loopback interface, rlimits and task counts.
What to confine and when is decided elsewhere (``tree.py``).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import struct


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



# ---------------------------------------------------------------- rlimits and task counts


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


