"""Run a program as a fresh unprivileged uid on a host that forbids namespaces: the *real* tier 2.

    as_uid.py --uid U --gid G [--nofile N] [--expose DIR]... [--no-forbid] -- PROGRAM [ARGS...]

Started as root, it enters a private mount namespace, makes each ``--expose`` directory
reachable although an ancestor is not (on this machine the interpreter lives under
``/root/.pyenv`` and ``/root`` is 0700: a 0755 tmpfs goes over the blocked ancestor
and the directory is bound back into it), drops to ``U``/``G`` with no supplementary
groups (no passwd entry needed), lowers the open-files limit to ``N`` (a desktop's
usual 1024), and then, like ``forbid_namespaces.py``, installs a seccomp filter that
refuses every new namespace, so the sandbox's probe settles on tier 2 by itself.

Started as a non-root user it only does the last two steps: that user *is* the real case.
The mount namespace and the tmpfs change nothing outside this process tree.
"""

import os
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run with -I -S: the checkout itself
from tutor.sandbox.inner import kernel, seccomp  # noqa: E402 - standard library only


def _blocked_ancestor(path: str) -> str | None:
    """The shallowest ancestor of ``path`` that others cannot search (``/root``), or None."""
    current = "/"
    for part in [p for p in path.split("/") if p][:-1]:
        current = os.path.join(current, part)
        if not os.stat(current).st_mode & 0o001:
            return current
    return None


def _expose(dirs: list[str]) -> None:
    kernel.unshare(kernel.CLONE_NEWNS)
    kernel.mount(None, "/", None, kernel.MS_REC | kernel.MS_PRIVATE)
    by_blocked: dict[str, list[tuple[str, int]]] = {}
    for d in dirs:
        blocked = _blocked_ancestor(d)
        if blocked is None:
            continue
        # the top directory below the blocked one: bind that, so everything under it comes along
        rel = os.path.relpath(d, blocked).split("/")[0]
        top = os.path.join(blocked, rel)
        held = by_blocked.setdefault(blocked, [])
        if top not in [t for t, _ in held]:
            held.append((top, os.open(top, os.O_PATH | os.O_CLOEXEC)))
    for blocked, tops in by_blocked.items():
        kernel.mount("tmpfs", blocked, "tmpfs", kernel.MS_NOSUID | kernel.MS_NODEV, "size=1m,mode=0755")
        for top, fd in tops:
            os.mkdir(top, 0o755)
            kernel.mount(f"/proc/self/fd/{fd}", top, None, kernel.MS_BIND | kernel.MS_REC)
            os.close(fd)


def main() -> None:
    args = sys.argv[1:]
    split = args.index("--")
    opts, program = args[:split], args[split + 1:]
    uid = gid = None
    nofile = None
    forbid = True
    exposes: list[str] = []
    i = 0
    while i < len(opts):
        if opts[i] == "--uid":
            uid = int(opts[i + 1])
        elif opts[i] == "--gid":
            gid = int(opts[i + 1])
        elif opts[i] == "--nofile":
            nofile = int(opts[i + 1])
        elif opts[i] == "--expose":
            exposes.append(os.path.abspath(opts[i + 1]))
        elif opts[i] == "--no-forbid":
            forbid = False
            i -= 1
        i += 2
    if os.geteuid() == 0:
        if uid is None or gid is None:
            sys.exit("as_uid.py: --uid and --gid are needed when started as root")
        _expose(exposes)
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    if nofile is not None:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(nofile, hard), hard))
    if forbid:
        kernel.no_new_privs()
        seccomp.load_filter(seccomp.build_filter(deny_namespaces_only=True))
    os.execv(program[0], program)


if __name__ == "__main__":
    main()
