"""The output directory: one host directory a tool's run writes into (the ``output-dir`` grant).

``pytorch-tutor capstone --package mine`` runs the learner's package in the sandbox, and that
run must leave its artifacts (token files, checkpoints, reports) in the capstone workspace on
the host. So the caller names that one directory (``Sandbox(output_dir=...)``), and tier 1
shows it read-write at :data:`wire.OUTPUT_TARGET` to a run granted ``output-dir``, and to no
other run: never to a lesson (lessons cannot ask for the grant), never to the judge's half of
a judged run. Nothing else of the host becomes visible or writable.

Like the compile cache it is measured during the run and the run stopped past its budget
(:data:`wire.OUTPUT_BYTES`, :data:`wire.OUTPUT_FILES`). Snippets run as another uid when the
tutor runs as root, so the directory's tree is handed to that uid (``lchown``: links are never
followed) before the zygote starts, and handed back when the sandbox closes (``owners`` before,
``hand_back`` after, both on the host's side): the host's files keep their owners and what the
runs made belongs to the directory's owner, so a root-run `capstone --package mine` does not
leave the learner's workspace to uid 65534. What is in it was written by sandboxed code and is
data to whoever reads it afterwards.
"""

from __future__ import annotations

import os
import stat

from tutor.sandbox.inner.compile_cache import CompileCache
from tutor.sandbox.inner.kernel import NOBODY
from tutor.sandbox.wire import OUTPUT_BYTES, OUTPUT_FILES


class OutputDir(CompileCache):
    budget_bytes, budget_files = OUTPUT_BYTES, OUTPUT_FILES

    @classmethod
    def open(cls, path: str, uid: int, gid: int, root: bool) -> "OutputDir":
        path = os.path.abspath(path)
        os.makedirs(path, mode=0o755, exist_ok=True)
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise OSError(f"the output directory {path} is not a directory")
        if root:
            for top, dirs, names in os.walk(path):  # os.walk does not descend into links
                for name in dirs + names:
                    os.lchown(os.path.join(top, name), uid, gid)
            os.chown(path, uid, gid)
        return cls(path)


MAX_REMEMBERED = 100_000  # entries whose owner is remembered; past that, they go to the directory's owner


def owners(path: str) -> tuple[tuple[int, int], dict[str, tuple[int, int]]]:
    """Before the sandbox starts: the directory's owner (the caller's own ids when it does not exist
    yet: the caller would have made it) and every entry's, by relative path."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return (os.geteuid(), os.getegid()), {}
    found: dict[str, tuple[int, int]] = {}
    for top, dirs, names in os.walk(path):  # os.walk does not descend into links
        for name in dirs + names:
            if len(found) >= MAX_REMEMBERED:
                break
            full = os.path.join(top, name)
            try:
                entry = os.lstat(full)
            except OSError:
                continue
            found[os.path.relpath(full, path)] = (entry.st_uid, entry.st_gid)
    return (st.st_uid, st.st_gid), found


def hand_back(path: str, owner: tuple[int, int], before: dict[str, tuple[int, int]], sandbox_uid: int = NOBODY) -> None:
    """After the sandbox is closed (no run can race this): every entry the sandbox's uid owns goes back
    to its owner from `before`, or to the directory's `owner` if a run made it. Only what the sandbox's
    uid owns is touched, never through a link, and never a file that also has a name outside the
    directory (a hard link: its links are not all in the tree); a set-id bit a run left is cleared.
    Never raises: a tree a run made unreadable stays as it is."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            return
        walked = [(path, ".", os.lstat(path))]
        for top, dirs, names in os.walk(path):
            for name in dirs + names:
                full = os.path.join(top, name)
                walked.append((full, os.path.relpath(full, path), os.lstat(full)))
    except (OSError, RecursionError):
        return
    links_inside: dict[tuple[int, int], int] = {}
    for _, _, st in walked:
        links_inside[(st.st_dev, st.st_ino)] = links_inside.get((st.st_dev, st.st_ino), 0) + 1
    for full, rel, st in walked:
        if st.st_uid != sandbox_uid:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_nlink > links_inside[(st.st_dev, st.st_ino)]:
            continue  # a name of this file lives outside the directory
        try:
            os.lchown(full, *(owner if rel == "." else before.get(rel, owner)))
            if stat.S_ISREG(st.st_mode) and st.st_mode & (stat.S_ISUID | stat.S_ISGID):
                os.chmod(full, stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
        except OSError:
            continue
