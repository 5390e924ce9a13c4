"""The host directories a sandbox shows its runs read-only (a course's code and data/), held open.

``Sandbox`` resolves them once and keeps an O_PATH descriptor on each; every zygote it starts
mounts (tier 1) or allows (tier 2) those descriptors, never the paths again, so a directory
swapped for a link after the check shows nothing new. Standard library only (no torch).
"""

from __future__ import annotations

import os


def hold_dir(path: str) -> int:
    """An O_PATH descriptor on the directory ``path`` (absolute, resolved), never reached through a link,
    so that what the sandbox later shows is what was checked now."""
    from tutor.sandbox.inner.mounts import open_dir_nofollow  # standard library only

    try:
        return open_dir_nofollow(path)
    except OSError:
        raise ValueError(f"read-only path {path!r} changed while it was opened (a link?)") from None


def close_all(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


def resolved_dirs(paths) -> list[str]:
    """Each path as a real directory (links resolved once, here), sorted and without repeats."""
    out = []
    for path in paths:
        resolved = os.path.realpath(os.fspath(path))
        if not os.path.isdir(resolved):
            raise ValueError(f"read-only path {os.fspath(path)!r} is not a directory")
        out.append(resolved)
    return sorted(set(out))
