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
followed) before the zygote starts; what is in it was written by sandboxed code and is data to
whoever reads it afterwards.
"""

from __future__ import annotations

import os
import stat

from tutor.sandbox.inner.compile_cache import CompileCache
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
