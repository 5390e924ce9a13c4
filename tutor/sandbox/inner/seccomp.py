"""seccomp: the system-call filter every confined runner loads last, and the reporter that names a trapped call.

Why a hand-written BPF program rather than libseccomp (decided with a measurement):

* cost is not the reason: through ctypes, Debian 12's libseccomp 2.5.4 builds an
  equivalent deny list and exports its BPF in 0.24 ms (median of 200) against 0.06 ms for
  :func:`build_filter`; both are far below a run's ~20 ms;
* expressiveness is: libseccomp 2.5 allows one comparison per argument in a rule, and
  rules for one call are ORed, so "refuse unless the argument is one of a set" — socket
  families, ``kill`` only to our own pid or 0, ``setpriority`` only for (PRIO_PROCESS, 0),
  clone only with CLONE_THREAD *and* CLONE_FILES — turns into range-splitting rules that
  are harder to review than the jumps below;
* the inner side imports only the standard library and torch: a pip binding is out, and
  the system's libseccomp.so.2, though on most desktops (systemd links it), is not on
  every machine the tutor installs onto (minimal containers), so a fallback would have to
  exist and be tested anyway.

What the library is best at, the syscall numbers for each architecture, is still used:
``tests/sandbox/test_seccomp_numbers.py`` checks every number in the tables below
against the system's libseccomp where it is installed.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

from tutor.sandbox.inner.kernel import (CLONE_THREAD, NEW_NAMESPACES, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, _fail,
                                           _libc)

BACKEND = "hand-written BPF via ctypes"  # what the doctor reports
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
    refused (memory and files held outside RLIMIT_AS and the scratch quota). In tier 1 memfds are
    refused too unless ``processes`` or ``exec_ok`` (torch shares tensors between processes through them).
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
    elif not (processes or exec_ok):
        # Tier 1, one process: a memfd holds memory that RLIMIT_AS never counts (data written into it,
        # never mapped) and that no tmpfs size caps, so without a memory cgroup a run could hold any
        # amount of it. Nothing a single process does needs one; torch's tensor sharing between processes
        # does, so runs granted processes (or exec) keep them (`doctor` says what that leaves uncapped).
        for name in ("memfd_create", "memfd_secret"):
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


