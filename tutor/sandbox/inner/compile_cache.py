"""A course's compile cache: what torch.compile (Inductor) built, kept across runs of that course.

A cold Inductor compile runs g++ (10-40 s on a loaded 2-core machine); with its
cache warm, a compiled drill loads the kernels it built before and runs no compiler
at all. So each course gets one directory on the host (``locations.compile_cache_dir``:
under the user's data directory, keyed by the course, never shared between courses),
and tier 1 shows it read-write at :data:`TARGET`, with ``TORCHINDUCTOR_CACHE_DIR``
pointing there, only to the learner-side process of a run granted ``exec``. Every
other run, and the judge's half of a judged run above all, has no such directory: a
verdict never depends on what a learner's earlier run left in the cache.

What is in it was written by sandboxed code, so it is trusted no further than that:
only sandboxed runs of the same course ever load it (a learner can at most fool their
own later predictions), and its size is bounded: before each such run the zygote
prunes it to half of :data:`BUDGET_BYTES` (least recently used first), and during the
run it is measured like a tier-2 scratch directory and the run stopped when it passes
the budget. Tiers 2 and 3 grant no ``exec``, so they never use it.

torch's precompiled header is switched off (``TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS=0``
in the zygote's and the runners' environment): it is one 148 MiB file (measured, torch
2.13, g++ 12), past the 16 MiB file-size limit and twice the 64 MiB scratch, and what it
saves on a cold compile, this cache saves on every warm one.
"""

from __future__ import annotations

import os
import stat

from tutor.sandbox.inner import scratch

TARGET = "/var/cache/inductor"  # where a run sees it (tier 1's private root)
BUDGET_BYTES = 512 << 20
BUDGET_FILES = 8192


class CompileCache:
    budget_bytes, budget_files = BUDGET_BYTES, BUDGET_FILES  # what it may hold while a run uses it

    def __init__(self, path: str):
        self.path = path

    @classmethod
    def open(cls, path: str, uid: int, gid: int, root: bool) -> "CompileCache":
        """The cache at ``path`` (created if missing), owned by the uid snippets run as."""
        path = os.path.abspath(path)
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            raise OSError(f"the compile cache {path} is not a directory")
        if root and (st.st_uid, st.st_gid) != (uid, gid):
            os.chown(path, uid, gid)  # snippets run as nobody here; only the zygote (root) can reach it anyway
        return cls(path)

    def usage(self) -> scratch.ScratchUsage:
        return scratch.ScratchUsage(self.path, self.budget_bytes, self.budget_files, self.budget_bytes)

    def over_budget(self) -> bool | None:
        """During a run: has it grown past the budget? None when it could not be measured."""
        try:
            self.usage().measure(None)
        except scratch.OverQuota:
            return True
        except OSError:
            return None
        return False

    def discard_since(self, started: float) -> None:
        """Remove every file written since ``started`` (wall clock); never raises.

        Called when a run that used the cache did not end cleanly (its time limit, the budget, a
        signal): g++ and Inductor write their outputs in place, so a run killed mid-compile can leave a
        truncated kernel behind. Its other writes go too (a later run compiles them again); so may a
        concurrent run's, which costs that run a cache miss only. A second of slack covers file systems
        whose timestamps lag the clock."""
        for path, st in self._files():
            if st.st_mtime >= started - 1.0:
                _unlink(path)

    def _files(self) -> list[tuple[str, os.stat_result]]:
        """Every file in the cache (a link counts as itself, never followed), as far as the walk gets."""
        found = []
        try:
            for top, dirs, names in os.walk(self.path):
                dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(top, d))]
                for name in names:
                    path = os.path.join(top, name)
                    found.append((path, os.lstat(path)))
        except (OSError, RecursionError):  # a tree the snippet made unreadable or absurdly deep
            pass
        return found

    def prune(self, keep_bytes: int = BUDGET_BYTES // 2, keep_files: int = BUDGET_FILES // 2) -> None:
        """Remove the least recently used files until the cache holds at most ``keep_*``; never raises.

        An empty shared object goes first whatever its age: no kernel is 0 bytes, and caches filled
        before ``discard_since`` existed can hold one from a compile killed mid-link."""
        files = []
        for path, st in self._files():
            if st.st_size == 0 and path.endswith(".so") and stat.S_ISREG(st.st_mode):
                _unlink(path)
                continue
            files.append((max(st.st_atime, st.st_mtime), st.st_blocks * 512, path))
        total = sum(size for _, size, _ in files)
        count = len(files)
        for _, size, path in sorted(files):
            if total <= keep_bytes and count <= keep_files:
                break
            if not _unlink(path):
                continue
            total -= size
            count -= 1


def _unlink(path: str) -> bool:
    """Remove one file of the cache; False when it could not be (gone already, or made unremovable)."""
    try:
        os.unlink(path)
    except OSError:
        return False
    return True
