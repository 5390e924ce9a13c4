"""Run a program on a "host" that forbids namespaces: ``forbid_namespaces.py PROGRAM [ARGS...]``.

Installs a seccomp filter that makes unshare(), setns() and clone() with any
CLONE_NEW* flag fail with EPERM (and clone3 with ENOSYS, so libc falls back to
clone), then execs the program. The filter is inherited by everything it
starts, so the sandbox's probe and zygote see what they would see under
Ubuntu's AppArmor user-namespace restriction or in a locked-down container.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run with -I -S: the checkout itself
from tutor.sandbox.inner import kernel, seccomp  # noqa: E402 - standard library only

kernel.no_new_privs()
seccomp.load_filter(seccomp.build_filter(deny_namespaces_only=True))
os.execv(sys.argv[1], sys.argv[1:])
