"""Landlock: a filesystem allow-list, TCP refused, signals and abstract sockets scoped (by ABI version)."""

from __future__ import annotations

import ctypes
import errno
import os
import stat

from tutor.sandbox.inner.kernel import _fail, _syscall

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
                      scope: bool = True, exec_ok: bool = False, list_only: list = ()) -> dict:
    """Allow only the given paths (str, or an fd already open on the path) and restrict ourselves.

    ``list_only`` directories may be listed, and nothing more (a directory holding a hidden file).

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
        for paths, rights in ((read_only, READ_ONLY & handled), (read_write, rw_rights), (devices, dev_rights),
                              (list_only, FS_READ_DIR & handled)):
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


