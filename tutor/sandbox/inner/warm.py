"""Warming the zygote: import torch once, in a state every forked child can use.

Measured pitfalls this follows (research notes, section 2):

* warm up with ``torch.set_num_threads(1)``, then restore the thread count
  without running an op: a zygote that ran a 2-thread OpenMP region deadlocks
  its children (libgomp's pool does not survive ``fork``);
* ``OPENBLAS_NUM_THREADS=1`` in its environment (``client.zygote_environment``),
  so numpy's OpenBLAS starts no thread (a second thread also makes
  ``unshare(CLONE_NEWUSER)`` fail);
* ``gc.freeze()`` last (``start.py``), so children do not copy the heap when the
  collector touches it (40 MB → 2 MB of private memory per child).

Tiers 2 and 3 started as root also need the interpreter's own directories reachable
for the sandbox uid (``reachable_python``) and the sources of what was imported
before that kept readable (``cache_unreachable_sources``).
"""

from __future__ import annotations

import os
import stat
import sys

from tutor.sandbox.inner import mounts
from tutor.sandbox.inner.tree import PATH_FD_BASE

# torch.compile's own modules (Dynamo's backends, Inductor's code generation and caches): about 3.4 s
# of imports that every compiling run would otherwise pay again. Imported after ``ready``, one module
# per pass of the loop while no run is in flight, and only when the course compiles (``--warm-compile``).
COMPILE_MODULES = ("torch._inductor.config", "torch._inductor.codecache", "torch._inductor.lowering",
                   "torch._inductor.graph", "torch._inductor.scheduler", "torch._inductor.codegen.cpp",
                   "torch._inductor.compile_fx", "torch._functorch.aot_autograd")

MODULES = ("json", "math", "random", "collections", "itertools", "functools", "dataclasses", "typing", "warnings",
           "socket", "subprocess", "threading", "ctypes", "copy", "pickle", "io")


def warm_torch(threads: int = 0):
    """Import torch and what drills use, run each kind of op once on one thread; return (torch, threads).

    ``threads`` is the intra-op thread count every run starts with (0: torch's own default, what a
    plain interpreter on this machine gets)."""
    import numpy  # noqa: F401
    import numpy.random  # noqa: F401 - the runner seeds it on every run
    import torch
    import torch.nn  # noqa: F401
    import torch.nn.functional as F
    import torch.optim  # noqa: F401
    import torch.utils.data  # noqa: F401

    for name in MODULES:
        __import__(name)
    threads = threads or torch.get_num_threads()
    torch.set_num_threads(1)  # never run an op with 2 threads here (libgomp + fork deadlock)
    x = torch.randn(32, 32, requires_grad=True)
    loss = (x @ x).tanh().sum() + F.conv2d(x.view(1, 1, 32, 32), torch.ones(1, 1, 3, 3)).sum()
    loss.backward()
    # Building the first optimizer imports torch._dynamo (about 3 s): pay it here, once,
    # instead of in every drill that trains.
    torch.optim.AdamW([x], lr=1e-3).step()
    torch.manual_seed(0)
    torch.set_num_threads(threads)  # no op may run after this line
    return torch, threads


class LateImports:
    """Modules imported while the zygote idles, one at a time, then frozen like the rest of the heap."""

    def __init__(self, names: tuple[str, ...]):
        self.pending = list(names)

    def step(self) -> None:
        import gc
        import importlib

        name = self.pending.pop(0)
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module this torch lacks: compiling runs import what they need
            pass
        if not self.pending:
            gc.collect()
            gc.freeze()


def reachable_python(uid: int, gid: int, root: bool) -> tuple[list[int], list[str]]:
    """Tiers 2 and 3 as root: make Python directories the sandbox uid cannot traverse reachable.

    The zygote (still root) opens an O_PATH descriptor on the first directory
    below the unreachable one; the children keep it at a fixed number, and
    ``sys.path`` names such directories through ``/proc/self/fd/N/…``, which
    needs no search permission on the parents. Landlock then allows reading
    exactly there. Returns the descriptors and the read-only paths as the runner names them.
    """
    fds: list[int] = []
    anchors: dict[str, str] = {}
    ro: list[str] = []

    def reach(path: str) -> str:
        if not root or traversable(path, uid, gid):
            return path
        anchor = _reachable_anchor(path, uid, gid)
        if anchor is None:
            return path
        if anchor not in anchors:
            fd = os.open(anchor, os.O_PATH | os.O_DIRECTORY)
            number = PATH_FD_BASE + len(fds)
            os.dup2(fd, number, inheritable=True)
            os.close(fd)
            fds.append(number)
            anchors[anchor] = f"/proc/self/fd/{number}"
        return anchors[anchor] + path[len(anchor):]

    for i, entry in enumerate(sys.path):
        if entry and os.path.isdir(entry):
            sys.path[i] = reach(entry)
    if fds:  # packages imported at start-up (encodings, importlib, ...) load submodules lazily
        for module in list(sys.modules.values()):
            search = getattr(module, "__path__", None)
            if isinstance(search, list):
                search[:] = [reach(p) if isinstance(p, str) and os.path.isdir(p) else p for p in search]
    paths = mounts.python_paths()
    for path in mounts.without(paths, mounts.hidden_dirs(paths)):  # never the tutor's own course
        ro.append(reach(path))
    return fds, sorted(set(ro))


def cache_unreachable_sources(uid: int, gid: int) -> None:
    """Tiers 2 and 3 as root: modules imported before ``sys.path`` was rewritten keep real paths the
    sandbox uid cannot open, so ``inspect.getsource`` (which torch.func and dynamo use) and
    tracebacks would fail on them. Their sources go into ``linecache`` here, marked as loader-provided
    (mtime None) so that ``linecache.checkcache`` never drops them in a child."""
    import linecache

    for module in list(sys.modules.values()):
        filename = getattr(module, "__file__", None)
        if not isinstance(filename, str) or not filename.endswith(".py") or filename in linecache.cache:
            continue
        if traversable(os.path.dirname(filename), uid, gid):
            continue
        try:
            with open(filename, encoding="utf-8") as f:
                lines = f.readlines()
        except (OSError, UnicodeDecodeError):
            continue
        linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)


def traversable(path: str, uid: int, gid: int) -> bool:
    current = "/"
    for part in [p for p in path.split("/") if p]:
        if not _may(current, uid, gid, stat.S_IXUSR):
            return False
        current = os.path.join(current, part)
    return _may(current, uid, gid, stat.S_IXUSR | stat.S_IRUSR)


def _may(path: str, uid: int, gid: int, user_bits: int) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    if st.st_uid == uid:
        bits = user_bits
    elif st.st_gid == gid:
        bits = user_bits >> 3
    else:
        bits = user_bits >> 6
    return (st.st_mode & bits) == bits


def _reachable_anchor(path: str, uid: int, gid: int) -> str | None:
    """The directory just below the deepest one on ``path`` that uid/gid cannot search, if all below is searchable."""
    parts = [p for p in path.split("/") if p]
    blocked = None
    for k in range(len(parts)):
        if not _may("/" + "/".join(parts[:k]), uid, gid, stat.S_IXUSR):
            blocked = k
    if blocked is None:
        return None
    for k in range(blocked + 1, len(parts) + 1):
        if not _may("/" + "/".join(parts[:k]), uid, gid, stat.S_IXUSR):
            return None
    return "/" + "/".join(parts[:blocked + 1])
