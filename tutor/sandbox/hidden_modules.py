"""Which files of the sandbox's read-only course directories a lab's learner process may not read.

A capstone stage lab asks the learner to write a module the course's own package already holds
(``capstone/model.py`` for 32's GPT). The sandbox shows that package to every run, because
prediction drills and the judge's tests use it; the learner's half of a lab run must not reach
it, or a one-line ``from capstone.model import *`` is a working submission. The lab's
``forbid_modules`` rule names the reference and every module that imports it; here those dotted
names become the files (or package directories) inside the read-only directories, found by
path alone (nothing is imported, so a pack's modules never run on the host), and the zygote
takes them out of what that run's Landlock rules allow. Standard library only (no torch).
"""

from __future__ import annotations

import os
from typing import Iterable


def hidden_paths(read_only: Iterable[str], modules: Iterable[str]) -> tuple[str, ...]:
    """The paths under ``read_only`` that hold ``modules`` (dotted names), and their bytecode.

    ``capstone.model`` with the read-only directory ``/x/capstone`` (the package) or ``/x`` (a
    directory holding it) is ``/x/capstone/model.py`` (or ``/x/capstone/model/``, a package); a
    name whose file is not there hides nothing. Names must be dotted identifiers, so none climbs
    out of its directory.
    """
    roots = [os.path.abspath(os.fspath(r)) for r in read_only]
    out: list[str] = []
    for name in modules:
        parts = str(name).split(".")
        if not all(part.isidentifier() for part in parts):
            continue
        for root in roots:  # a root is the package itself (capstone/) or a directory that holds it
            bases = [os.path.join(root, *parts)]
            if parts[0] == os.path.basename(root) and len(parts) > 1:
                bases.append(os.path.join(root, *parts[1:]))
            for base in bases:
                for candidate in (base + ".py", base, *_bytecode(base)):
                    if os.path.lexists(candidate) and candidate not in out:
                        out.append(candidate)
    return tuple(sorted(out))


def _bytecode(base: str) -> list[str]:
    """The module's compiled copies beside it (``__pycache__/model.cpython-311.pyc``): an import
    loads a fresh one without opening the source, and ``marshal`` reads any of them."""
    cache = os.path.join(os.path.dirname(base), "__pycache__")
    prefix = os.path.basename(base) + "."
    try:
        return [os.path.join(cache, e) for e in sorted(os.listdir(cache)) if e.startswith(prefix) and e.endswith(".pyc")]
    except OSError:
        return []
