"""Load a course directory: ``course.yaml`` plus one YAML file per module.

A broken module file never stops the others from loading: its slot carries the
errors and the map shows it as broken. Problems with the course file itself
(unknown ``requires``, cycles, duplicate ids, missing files) are course errors.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from tutor.course import cache as parse_cache
from tutor.course.course_code import HELPERS_DIR, link_labs, load_helpers
from tutor.course.data_files import link_data
from tutor.course.errors import LessonError, LessonFileError
from tutor.course.graph import find_cycle
from tutor.course.reader import Reader
from tutor.course.schema import READABLE_VERSIONS, Module, parse_module
from tutor.course.yaml_source import MarkedDict, load_yaml

COURSE_FILE = "course.yaml"


@dataclass
class ModuleSlot:
    """A module's place in the course, whether or not its lesson file exists yet."""

    id: str
    title: str
    part: str
    requires: tuple[str, ...]
    file: str | None
    module: Module | None = None
    errors: list[LessonError] = field(default_factory=list)

    @property
    def is_coming(self) -> bool:
        return self.file is None

    @property
    def is_broken(self) -> bool:
        return bool(self.errors)


@dataclass(frozen=True)
class Part:
    id: str
    title: str


@dataclass
class Course:
    title: str
    root: Path
    parts: list[Part]
    slots: list[ModuleSlot]
    errors: list[LessonError] = field(default_factory=list)  # course-level problems
    id: str = ""  # course.yaml's `id:`: the learner's progress in this course is kept under it
    warnings: list[str] = field(default_factory=list)  # said by validate and check; loading goes on
    helpers: tuple[tuple[str, str], ...] = ()  # helpers/*.py as (module name, source): imported only in the sandbox

    @property
    def identity(self) -> str:
        """What the profile keys this course's progress by: its id, or (an error already) its directory."""
        return self.id or f"dir:{self.root.resolve()}"

    def slot(self, module_id: str) -> ModuleSlot | None:
        return next((s for s in self.slots if s.id == module_id), None)

    def all_errors(self) -> list[LessonError]:
        return self.errors + [e for s in self.slots for e in s.errors]

    def modules(self) -> list[Module]:
        return [s.module for s in self.slots if s.module is not None]

    def renames(self) -> dict[tuple[str, str], str]:
        """(module id, old item id) -> new item id, for every item a module renamed (its ``renamed:``)."""
        return {(m.id, old): new for m in self.modules() for old, new in m.renamed}


def _read_bytes(path: Path, shown: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise LessonFileError([LessonError(shown, 1, 1, "", f"cannot read: {exc.strerror}")]) from None


def _decode(content: bytes, shown: str) -> str:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LessonFileError([LessonError(shown, 1, 1, "", f"not valid UTF-8 (byte {exc.start})")]) from None


def load_module_file(path: Path, shown: str | None = None) -> tuple[Module | None, list[LessonError]]:
    """Load and validate one module file on its own (from the parsed-module cache when it has this content)."""
    shown = shown or str(path)
    try:
        content = _read_bytes(path, shown)
    except LessonFileError as exc:
        return None, exc.errors
    key = parse_cache.entry_key(content, shown)
    cached = parse_cache.lookup(key)
    if cached is None:
        try:
            cached = parse_module(load_yaml(_decode(content, shown), shown), shown)
        except LessonFileError as exc:
            cached = None, exc.errors
        parse_cache.store(key, *cached)
    module, errors = cached
    return (replace(module, source_key=key) if module is not None else None), errors


_COURSE_KEYS = {"format_version", "title", "parts", "modules"}
_PART_KEYS = {"id", "title"}
_SLOT_KEYS = {"id", "title", "part", "requires"}
_SLOT_OPTIONAL = {"file"}


@dataclass
class CourseListing:
    """What ``course.yaml`` lists, as read (remembered in the parse cache by its content, like a module file)."""

    title: str = ""
    id: str = ""
    parts: list[Part] = field(default_factory=list)
    slots: list[ModuleSlot] = field(default_factory=list)  # no modules loaded yet
    errors: list[LessonError] = field(default_factory=list)
    marks: dict[str, tuple[int, int]] = field(default_factory=dict)  # each module's entry, for later errors
    id_missing: bool = False  # no `id:` (packs written before it was required): derived from the directory
    complete: bool = True  # False: the file could not be read as a course at all; nothing more is loaded


def load_course(root: Path, shown_root: str | None = None) -> Course:
    """Load the course at ``root``; never raises for content problems."""
    root = Path(root)
    shown_root = shown_root if shown_root is not None else str(root)
    course_name = f"{shown_root}/{COURSE_FILE}" if shown_root else COURSE_FILE
    listing = _listing(root / COURSE_FILE, course_name)
    course = Course(title=listing.title, root=root, parts=listing.parts, slots=listing.slots, id=listing.id)
    if listing.id_missing and listing.complete:
        course.id = derived_course_id(root)
        course.warnings.append(f"{course_name}:1:1: warning: no `id:`; this course's progress is kept under "
                               f"`{course.id}`, derived from its directory's name. Pin it: add `id: {course.id}` "
                               "to course.yaml (a renamed directory would otherwise start the progress afresh)")
    if not listing.complete:
        course.errors = listing.errors
        return course
    reader = Reader(course_name)
    reader.errors = listing.errors
    marks = listing.marks

    resolved_root = _resolved(root)  # once, not per module file
    for slot in course.slots:
        if slot.file is None:
            continue
        file_path = root / slot.file
        shown = f"{shown_root}/{slot.file}" if shown_root else slot.file
        if resolved_root is None or not _inside(file_path, resolved_root):
            reader.error(marks[slot.id], f"module {slot.id}.file",
                         f"lesson file {slot.file!r} resolves outside the course directory (a link?)")
            slot.errors = [LessonError(shown, 1, 1, "", "file lies outside the course directory")]
            continue
        if not file_path.is_file():
            reader.error(marks[slot.id], f"module {slot.id}.file", f"lesson file {slot.file!r} does not exist")
            slot.errors = [LessonError(shown, 1, 1, "", "file does not exist")]
            continue
        module, errors = load_module_file(file_path, shown)
        # a module that parsed under the listed id needs no second look at its text (2.7 MB for the course)
        mismatch = None if module is not None and module.id == slot.id else _module_id_mismatch(file_path, shown, slot.id)
        if mismatch is not None:  # said at its line, beside the file's other errors (if any)
            errors = sorted([*errors, mismatch], key=lambda e: (e.line, e.column))
            module = None
        slot.module, slot.errors = module, errors

    # the course's shared code: helpers for every drill, and chained labs' earlier stages
    course.helpers, helper_errors = load_helpers(root, shown_root)
    linked, link_errors = link_labs({s.id: s.module for s in course.slots if s.module is not None},
                                    {s.id: s.requires for s in course.slots}, course.helpers)
    linked, data_errors = link_data(linked, root, shown_root)
    for slot in course.slots:
        if slot.module is not None:
            slot.module = linked[slot.id]
    course.errors = reader.errors + helper_errors + link_errors + data_errors
    return course


GENERIC_DIR_NAMES = {"lessons", "lesson", "course", "courses", "pack", "src", "content"}


def derived_course_id(root: Path) -> str:
    """An id for a course.yaml without one: the directory's name, or its package's where the
    directory has a generic name (``my_pack/lessons`` -> ``my_pack``), made a safe id."""
    from tutor.course.schema import is_safe_id

    resolved = Path(os.path.abspath(root))
    name = resolved.name
    if name.lower() in GENERIC_DIR_NAMES and resolved.parent.name:
        name = resolved.parent.name
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-._")[:64] or "course"
    if not slug[0].isalnum():
        slug = "c" + slug[:63]
    return slug if is_safe_id(slug) else "course"


def _listing(path: Path, course_name: str) -> CourseListing:
    """``course.yaml`` read, from the parse cache when it holds this content (no YAML parser needed then)."""
    try:
        content = _read_bytes(path, course_name)
    except LessonFileError as exc:
        return CourseListing(errors=exc.errors, complete=False)
    key = parse_cache.entry_key(b"course listing\0" + content, course_name)  # never a module file's key
    known = parse_cache.recall(key)
    if isinstance(known, CourseListing):
        return known
    listing = _read_listing(content, course_name)
    parse_cache.remember(key, listing)
    return listing


def _read_listing(content: bytes, course_name: str) -> CourseListing:
    listing = CourseListing()
    try:
        data = load_yaml(_decode(content, course_name), course_name)
    except LessonFileError as exc:
        return CourseListing(errors=exc.errors, complete=False)
    reader = Reader(course_name)
    listing.errors = reader.errors
    top = reader.mapping(data, "", (1, 1), _COURSE_KEYS, {"id"})
    if top is None:
        listing.complete = False
        return listing
    if "id" in top:
        listing.id = reader.identifier(top, "id", "")
    else:  # a pack that validated before `id:` was required keeps loading (see derived_course_id)
        listing.id_missing = True
    if top.get("format_version") not in READABLE_VERSIONS and "format_version" in top:
        reader.error(reader.key_mark(top, "format_version"), "format_version",
                     f"this tutor reads format_version {' or '.join(map(str, READABLE_VERSIONS))}")
    listing.title = reader.text(top, "title", "")

    parts = reader.sequence(top, "parts", "")
    for i, item in enumerate(parts):
        p = reader.mapping(item, f"parts[{i}]", parts.item_marks[i], _PART_KEYS, set())
        if p is not None:
            listing.parts.append(Part(reader.identifier(p, "id", f"parts[{i}]"),
                                      reader.text(p, "title", f"parts[{i}]")))
    part_ids = {p.id for p in listing.parts}

    entries = reader.sequence(top, "modules", "")
    marks = listing.marks
    for i, item in enumerate(entries):
        path = f"modules[{i}]"
        m = reader.mapping(item, path, entries.item_marks[i], _SLOT_KEYS, _SLOT_OPTIONAL)
        if m is None:
            continue
        slot_id = reader.identifier(m, "id", path)
        if not slot_id:
            continue
        if slot_id in marks:
            reader.error(entries.item_marks[i], f"{path}.id", f"duplicate module id {slot_id!r}")
            continue
        marks[slot_id] = entries.item_marks[i]
        part = reader.text(m, "part", path)
        if part and part not in part_ids:
            reader.error(reader.key_mark(m, "part"), f"{path}.part", f"unknown part {part!r}")
        requires = tuple(str(r) for r in reader.sequence(m, "requires", path))
        file = reader.text(m, "file", path, default="") or None
        if file is not None and not _is_plain_file_name(file):
            reader.error(reader.key_mark(m, "file"), f"{path}.file",
                         f"{file[:80]!r}: a module file is named relative to the course directory, "
                         "without '..' or an absolute path")
            file = None
        listing.slots.append(ModuleSlot(slot_id, reader.text(m, "title", path), part, requires, file))

    ids = {s.id for s in listing.slots}
    for i, slot in enumerate(listing.slots):
        for req in slot.requires:
            if req not in ids:
                reader.error(marks[slot.id], f"modules[{i}].requires", f"module {slot.id} requires unknown module {req!r}")
    cycle = find_cycle({s.id: s.requires for s in listing.slots})
    if cycle:
        reader.error(marks[cycle[0]], "modules", "the requires graph has a cycle: " + " → ".join(cycle))
    return listing


_MODULE_LINE = re.compile(r"""^module:[ \t]*(["']?)([^"'#\s]*)\1[ \t]*(?:#.*)?$""")


def _module_id_mismatch(path: Path, shown: str, listed: str) -> LessonError | None:
    """The file's top-level ``module:`` when it is not the id course.yaml lists, at its own line.

    Read from the text, not the parsed module, so that it is reported even when the
    file has other errors (and no module could be built).
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for number, line in enumerate(lines, start=1):
        if (m := _MODULE_LINE.match(line)) and m.group(2) != listed:
            return LessonError(shown, number, 1, "module",
                               f"says {m.group(2)[:40]!r} but course.yaml lists it as {listed!r}")
    return None


def load_module_file_in_course(path: Path) -> tuple[Module | None, list[LessonError]]:
    """A module file on its own; when it is one of a course's files, with that course's helpers and stages."""
    path = Path(path)
    parent = path.parent
    if is_course_dir(parent):
        course = load_course(parent, str(parent))
        for slot in course.slots:
            if slot.file and (parent / slot.file).resolve() == path.resolve():
                shown = f"{parent}/{slot.file}"
                helpers = f"{parent}/{HELPERS_DIR}/"
                errors = slot.errors + [e for e in course.errors if e.file == shown or e.file.startswith(helpers)]
                return (None if errors else slot.module), errors
    return load_module_file(path)


def _is_plain_file_name(name: str) -> bool:
    """A relative path of plain components: no absolute path, no '..', no empty or odd parts."""
    if name.startswith(("/", "\\")) or "\\" in name or "\0" in name:
        return False
    parts = name.split("/")
    return all(part and part not in (".", "..") for part in parts)


def _inside(path: Path, resolved_root: Path) -> bool:
    """``path`` resolved (links followed) still lies under ``resolved_root`` (already resolved)."""
    resolved = _resolved(path)
    return resolved is not None and resolved.is_relative_to(resolved_root)


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a link loop
        return None


def is_course_dir(path: Path) -> bool:
    return (Path(path) / COURSE_FILE).is_file()


__all__ = ["Course", "ModuleSlot", "Part", "load_course", "load_module_file", "is_course_dir", "MarkedDict"]
