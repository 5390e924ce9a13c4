"""Lesson packs installed as Python packages (entry point group ``pytorch_tutor.courses``).

A pack declares itself in its ``pyproject.toml``::

    [project.entry-points."pytorch_tutor.courses"]
    my-course = "my_course"          # the package directory that holds course.yaml

The tutor never imports or loads the entry point: a pack is third-party lessons, and
nothing from a course runs outside the sandbox. The package's directory is found from
the distribution's own metadata (``locate_file``), or for a top-level name by
``importlib.util.find_spec``, which locates a package without running it. From there a
pack is exactly a ``--lessons DIR``: the same refusal where the sandbox cannot confine it,
the same grant consent.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from tutor.course.loader import COURSE_FILE, is_course_dir, load_course

GROUP = "pytorch_tutor.courses"


@dataclass(frozen=True)
class InstalledPack:
    name: str  # the entry point's name
    distribution: str
    version: str
    root: Path | None  # None: the entry point names no directory with a course.yaml
    problem: str = ""
    side_doors: tuple[str, ...] = ()  # what else the package installs that runs code outside the tutor's sandbox


def _side_doors(dist) -> tuple[str, ...]:
    """What a pack's distribution installs that other programs run, unasked: ``.pth`` files (their ``import``
    lines run in every Python process of the environment) and entry points in groups other than ours
    (console scripts, pytest plugins, ...). Read from its metadata (RECORD, entry_points.txt), never imported."""
    if dist is None:
        return ()
    found = []
    try:
        files = dist.files or []
    except Exception:  # noqa: BLE001 - a malformed RECORD is the pack's problem, not a traceback
        files = []
    for file in files:
        parts = Path(str(file)).parts
        if len(parts) == 1 and parts[0].endswith(".pth"):
            found.append(f"{parts[0]} (runs at the start of every Python process in this environment)")
    try:
        groups = sorted({ep.group for ep in dist.entry_points} - {GROUP})
    except Exception:  # noqa: BLE001
        groups = []
    for group in groups:
        found.append(f"entry points in {group!r} (code other programs load)")
    return tuple(found)


def _package_dir(ep: EntryPoint) -> tuple[Path | None, str]:
    target = ep.value.split(":", 1)[0].strip()
    if not target or not all(part.isidentifier() for part in target.split(".")):
        return None, f"entry point value {ep.value[:80]!r} is not a package name"
    if ep.dist is not None:
        located = Path(ep.dist.locate_file(target.replace(".", "/")))
        if is_course_dir(located):
            return located, ""
    if "." not in target:  # find_spec of a dotted name would import its parents: only top-level names
        spec = importlib.util.find_spec(target)
        for location in (spec.submodule_search_locations or []) if spec else []:
            if is_course_dir(Path(location)):
                return Path(location), ""
    return None, f"package {target!r} has no {COURSE_FILE}"


def installed_packs() -> list[InstalledPack]:
    packs = []
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        dist = ep.dist
        root, problem = _package_dir(ep)
        packs.append(InstalledPack(ep.name, dist.metadata["Name"] if dist else "?", dist.version if dist else "?",
                                   root, problem, _side_doors(dist)))
    return packs


def course_dir(wanted: str) -> Path:
    """The directory of the installed course whose ``id:`` (or entry point name) is ``wanted``."""
    known = []
    for pack in installed_packs():
        if pack.root is None:
            continue
        course_id = load_course(pack.root, str(pack.root)).id
        if wanted in (course_id, pack.name):
            return pack.root
        known.append(course_id or pack.name)
    listing = ", ".join(sorted(known)) or "none is installed"
    raise ValueError(f"no installed course {wanted!r} (installed: {listing}; `pytorch-tutor courses` lists them)")


def print_courses(out) -> int:
    """``pytorch-tutor courses``: id, version, title and the sandbox grants each pack asks for."""
    from tutor.course import grants
    from tutor.safe_text import safe_line

    packs = installed_packs()
    if not packs:
        print(f"No lesson packs installed (packages declaring the entry point group {GROUP!r}).", file=out)
        return 0
    for pack in packs:
        head = f"{safe_line(pack.distribution, 80)} {safe_line(pack.version, 40)}"
        for door in pack.side_doors:  # outside the sandbox: the learner should know before using this pack
            print(f"WARNING: {safe_line(pack.distribution, 80)} also installs {safe_line(door, 200)}; "
                  "it runs outside the tutor's sandbox, as you", file=out)
        if pack.root is None:
            print(f"{safe_line(pack.name, 80)}  ({head}): unusable: {safe_line(pack.problem, 200)}", file=out)
            continue
        course = load_course(pack.root, str(pack.root))
        modules = course.modules()
        errors = len(course.all_errors())
        print(f"{safe_line(course.id or pack.name, 80)}  {safe_line(course.title, 100)}  ({head}; "
              f"{len(modules)} modules" + (f", {errors} errors: run `validate`" if errors else "") + ")", file=out)
        wanted = grants.requested(modules)
        print(("  asks the sandbox for:\n" + safe_line(grants.describe(wanted), 2000)) if wanted
              else "  asks the sandbox for nothing beyond its default confinement", file=out)
        print(f"  open it: pytorch-tutor --course {safe_line(course.id or pack.name, 80)}", file=out)
    return 0
