"""A course's data files: ``data/`` beside ``course.yaml``, read by drills and labs inside the sandbox.

A drill names the files it reads (format 2)::

    data: [names.txt, corpus/tiny.txt]      # relative to the course's data/ directory

Each name is checked twice. When the module is parsed: a plain relative path (no absolute
path, no ``..``, no backslash, no empty or hidden part). When the course is loaded (here,
with its directory known): the file exists, is a regular file, lies inside ``data/`` once
every symbolic link is resolved, and keeps under the size caps; ``validate`` reports each
problem at the name's own file:line:column.

Inside the sandbox the drill imports ``course_files`` (a module generated here from the
checked names and served like the course's helpers, never a file of the course) and reads
``course_files.read_text("names.txt")``, ``read_bytes``, or ``path`` for a library that
wants a file name. Only declared names are served. The sandbox shows ``data/`` read-only
(``grants.code_dirs``): a run can read the course's files but never change them.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from tutor.course.errors import LessonError
from tutor.course.lab_fields import positioned
from tutor.course.reader import Reader, join
from tutor.course.schema import DataRef
from tutor.course.yaml_source import MarkedDict

DATA_DIR = "data"
MODULE = "course_files"  # the module drills import inside the sandbox (a helper may not take this name)
MAX_FILE_BYTES = 8 << 20
MAX_COURSE_BYTES = 64 << 20  # every file the course's drills name, counted once
MAX_NAMES = 32  # per drill
MAX_NAME = 200


def read_names(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> tuple[DataRef, ...]:
    """The drill's ``data:`` list: each name checked for shape at its own position."""
    items = reader.sequence(data, key, path)
    if key in data and not items:
        reader.error(reader.key_mark(data, key), join(path, key), "list at least one file of the course's data/")
    if len(items) > MAX_NAMES:
        reader.error(reader.key_mark(data, key), join(path, key), f"at most {MAX_NAMES} data files per drill")
    out: list[DataRef] = []
    for where, item, mark in positioned(items, key, path):
        problem = name_problem(item)
        if problem:
            reader.error(mark, where, problem)
        elif any(ref.name == item for ref in out):
            reader.error(mark, where, f"{item!r} is listed twice")
        else:
            out.append(DataRef(item, mark[0], mark[1]))
    return tuple(out)


def name_problem(name) -> str:
    """Why ``name`` cannot name a data file ("" when it can): only plain relative paths inside data/."""
    if not isinstance(name, str) or not name.strip():
        return "expected a file name relative to the course's data/ directory"
    shown = repr(name[:80])
    if len(name) > MAX_NAME:
        return f"{shown}…: a data file name is at most {MAX_NAME} characters"
    if name.startswith("/") or "\\" in name or "\0" in name or ":" in name.split("/")[0]:
        return f"{shown}: name a file relative to the course's data/ directory, not an absolute path"
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return f"{shown}: a data file name has no '..', '.' or empty parts (it must stay inside data/)"
    if any(p.startswith(".") for p in parts) or any(not p.isprintable() for p in parts):
        return f"{shown}: hidden files and control characters are not data file names"
    return ""


def data_dir(root: Path) -> Path | None:
    """The course's resolved ``data/`` directory, when it has one inside the course directory."""
    directory = Path(root) / DATA_DIR
    if not directory.is_dir():
        return None
    resolved = directory.resolve()
    return resolved if resolved.is_relative_to(Path(root).resolve()) else None


def link_data(modules: dict, root: Path, shown_root: str) -> tuple[dict, list[LessonError]]:
    """Check every drill's data names against the course's files; serve each drill its ``course_files`` module."""
    errors: list[LessonError] = []
    directory = data_dir(root)
    if (Path(root) / DATA_DIR).is_dir() and directory is None:
        shown = f"{shown_root}/{DATA_DIR}" if shown_root else DATA_DIR
        errors.append(LessonError(shown, 1, 1, "", "data/ resolves outside the course directory (a link?)"))
    sizes: dict[str, int] = {}
    linked = {}
    for module_id, module in modules.items():
        drills = []
        for drill in module.drills:
            served = {}
            for ref in drill.data:
                found = _resolve(directory, ref.name)
                if isinstance(found, str):
                    errors.append(LessonError(module.file, ref.line, ref.column, f"{drill.id}.data", found))
                    continue
                sizes[str(found[0])] = found[1]
                served[ref.name] = str(found[0])
            drills.append(replace(drill, helpers=drill.helpers + ((MODULE, module_source(served)),))
                          if served else drill)
        linked[module_id] = replace(module, drills=tuple(drills))
    total = sum(sizes.values())
    if total > MAX_COURSE_BYTES:
        shown = f"{shown_root}/{DATA_DIR}" if shown_root else DATA_DIR
        errors.append(LessonError(shown, 1, 1, "", f"the drills name {total >> 20} MiB of data files; the cap is "
                                                   f"{MAX_COURSE_BYTES >> 20} MiB for a course"))
    return linked, errors


def _resolve(directory: Path | None, name: str) -> tuple[Path, int] | str:
    if directory is None:
        return f"{name[:80]!r}: this course has no data/ directory beside course.yaml"
    path = directory / name
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return f"{name[:80]!r}: no such file in the course's data/ directory"
    if not resolved.is_relative_to(directory):
        return f"{name[:80]!r} resolves outside the course's data/ directory (a link out of it?)"
    try:
        stat = resolved.stat()
    except OSError as exc:
        return f"{name[:80]!r}: cannot read it ({exc.strerror})"
    if not os.path.isfile(resolved):
        return f"{name[:80]!r} is not a regular file"
    if stat.st_size > MAX_FILE_BYTES:
        return f"{name[:80]!r} is {stat.st_size >> 20} MiB; a data file is at most {MAX_FILE_BYTES >> 20} MiB"
    return resolved, stat.st_size


def module_source(served: dict[str, str]) -> str:
    """The ``course_files`` module a drill imports in the sandbox: its declared files, by name, read-only."""
    return f'''"""This drill's data files (the course's data/ directory, shown read-only). Generated by the tutor."""

FILES = {dict(sorted(served.items()))!r}


def path(name):
    """The file's path, for a library that opens files itself."""
    try:
        return FILES[name]
    except KeyError:
        raise FileNotFoundError(
            f"{{name!r}} is not one of this drill's data files ({{', '.join(sorted(FILES)) or 'none'}}); "
            "a drill names each file it reads under `data:`") from None


def read_bytes(name):
    with open(path(name), "rb") as f:
        return f.read()


def read_text(name, encoding="utf-8"):
    with open(path(name), encoding=encoding) as f:
        return f.read()
'''
