"""The hand-written seccomp filter's syscall numbers, checked against libseccomp's tables where it is installed."""

from __future__ import annotations

import ctypes
import ctypes.util

import pytest

from tutor.sandbox.inner import seccomp


def _libseccomp():
    name = ctypes.util.find_library("seccomp")
    if not name:
        pytest.skip("libseccomp is not installed here")
    lib = ctypes.CDLL(name)
    lib.seccomp_syscall_resolve_name_arch.argtypes = [ctypes.c_uint32, ctypes.c_char_p]
    lib.seccomp_syscall_resolve_name_arch.restype = ctypes.c_int
    return lib


@pytest.mark.parametrize("arch", sorted(seccomp.AUDIT_ARCH))
def test_every_syscall_number_matches_libseccomp(arch):
    lib = _libseccomp()
    token = seccomp.AUDIT_ARCH[arch]  # libseccomp's arch tokens are the audit arch values
    wrong = {}
    for table in (seccomp._DENY, seccomp._SPECIAL, seccomp._SELF_ONLY):
        for name, nr in table[arch].items():
            theirs = lib.seccomp_syscall_resolve_name_arch(token, name.encode())
            if theirs != nr:
                wrong[name] = (nr, theirs)
    assert wrong == {}, wrong
