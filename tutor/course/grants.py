"""What a course asks the sandbox to grant beyond the default confinement, drill by drill.

A third-party pack's ``needs:`` (processes, exec, loopback) widen what its code may
do, so a learner sees them and accepts them once per pack before any of its
drills runs (remembered in the profile; asked again if the pack asks for more).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable

from tutor.course.schema import Module
from tutor.wording import count

WHY = {
    "processes": "start processes (e.g. DataLoader workers)",
    "exec": "run programs (e.g. a C++ compiler for torch.compile)",
    "loopback": "open network sockets on the sandbox's own loopback (e.g. two-process gloo)",
}


def requested(modules: Iterable[Module]) -> dict[str, list[str]]:
    """Each grant the modules' drills need → the drills (``module/drill``) that need it."""
    wanted: dict[str, list[str]] = {}
    for module in modules:
        for drill in module.drills:
            for need in drill.needs:
                wanted.setdefault(need, []).append(f"{module.id}/{drill.id}")
    return dict(sorted(wanted.items()))


def describe(wanted: dict[str, list[str]]) -> str:
    lines = []
    for need, drills in wanted.items():
        shown = ", ".join(drills[:4]) + (f" and {len(drills) - 4} more" if len(drills) > 4 else "")
        lines.append(f"  {need}: {WHY.get(need, need)} — {count(len(drills), 'drill')}: {shown}")
    return "\n".join(lines)


def pack_key(root: Path) -> str:
    """Which pack a consent belongs to: its resolved directory."""
    return "grants:" + hashlib.sha256(str(Path(root).resolve()).encode()).hexdigest()[:24]


def sandbox_options(course_root: Path, modules: Iterable[Module]) -> dict:
    """What a sandbox for a course is made with: ``Sandbox(**sandbox_options(course.root, course.modules()))``.

    The course's own code, read-only; its compile cache; and, when any of its drills may
    compile (``needs: [exec]``), torch.compile's modules imported ahead in the zygote.
    """
    from tutor.locations import compile_cache_dir

    return {"read_only": code_dirs(course_root), "compile_cache": compile_cache_dir(course_root),
            "warm_compile": "exec" in requested(modules)}


def code_dirs(course_root: Path) -> list[Path]:
    """Directories a course's drills read inside the sandbox, which it shows them read-only.

    The sandbox shows nothing of the host but the interpreter's own directories, so a
    course names here what its code reads and its caller passes it on
    (``Sandbox(read_only=...)``): its ``data/`` directory (``data_files.py``), and for the
    built-in course the ``capstone`` package (the GPT its last modules build and use; it
    holds only code a learner reads anyway).
    """
    import importlib.util

    from tutor.course.data_files import data_dir
    from tutor.locations import builtin_course_dir

    data = data_dir(course_root)
    shown = [data] if data is not None else []
    if Path(course_root).resolve() != builtin_course_dir().resolve():
        return shown
    spec = importlib.util.find_spec("capstone")  # locates the package without importing it
    return shown + ([Path(p) for p in (spec.submodule_search_locations or [])] if spec else [])
