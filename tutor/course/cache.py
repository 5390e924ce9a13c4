"""A cache of parsed module files, so that launching the tutor does not re-read 2.7 MB of YAML.

Parsing the built-in course (YAML events, the schema, a syntax check of every snippet) costs
about 0.4 s of a launch; reading it back from here costs a few milliseconds. An entry is keyed
by a hash of everything the parse depends on: the file's bytes, the name errors are reported
under, and the source of the code that parses it (``tutor/course`` and ``tutor/judge``), so an
edited lesson or an upgraded tutor simply misses and is parsed again.

The cache is data, never code: entries are plain values and the parsing packages' own dataclasses
and enums (only those, by name: see the codec below), with a checksum over the payload. Anything unexpected (a
truncated file, a bit flip, a class that no longer exists, a field that was renamed) makes the
entry a miss: it is parsed again and rewritten. Nothing is ever required of the cache: when the
cache directory cannot be written, the tutor just parses every time.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import io
import json
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from tutor.course.errors import LessonError

CACHE_FORMAT = 2  # 2: a restricted pickle (1 was JSON with an object hook)
MAX_ENTRIES = 400  # an author's edits leave old entries behind; past this the oldest go
PACKAGES = ("tutor.course", "tutor.judge")  # the code a parse depends on, and the only classes an entry may name
_SUBDIR = "parsed-modules"

_fingerprint: str | None = None


def code_fingerprint() -> str:
    """A hash of the parsing code's source: a changed schema invalidates every entry."""
    global _fingerprint
    if _fingerprint is None:
        digest = hashlib.sha256(f"{CACHE_FORMAT} {sys.version}".encode())
        here = Path(__file__).resolve().parent
        for directory in (here, here.parent / "judge"):
            for source in sorted(directory.glob("*.py")):
                digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
        _fingerprint = digest.hexdigest()
    return _fingerprint


def entry_key(content: bytes, shown: str) -> str:
    digest = hashlib.sha256(code_fingerprint().encode())
    digest.update(shown.encode("utf-8", "surrogatepass") + b"\0")
    digest.update(content)
    return digest.hexdigest()


def _directory() -> Path | None:
    from tutor.locations import cache_dir

    try:
        path = cache_dir() / _SUBDIR
        path.mkdir(parents=True, exist_ok=True)
        return path
    except OSError:
        return None


def lookup(key: str):
    """``(module, errors)`` stored under ``key``, or None for a miss (absent, unreadable or corrupt)."""
    entry = recall(key)
    if not isinstance(entry, list) or len(entry) != 2:
        return None
    module, errors = entry
    if not isinstance(errors, list) or not all(isinstance(e, LessonError) for e in errors):
        return None
    from tutor.course.schema import Module

    if module is not None and not isinstance(module, Module):
        return None
    return module, errors


def store(key: str, module, errors: list[LessonError]) -> None:
    """Remember a parse; failing to (a full disk, a read-only home) only costs the next launch time."""
    remember(key, [module, list(errors)])


def derived_key(kind: str, *parts: str) -> str:
    """The key of something computed from parsed modules alone (e.g. ``derived_key("giveaways", module.source_key,
    ...)``): it changes with the parts and with the parsing code."""
    digest = hashlib.sha256(f"{code_fingerprint()}\0{kind}".encode())
    for part in parts:
        digest.update(b"\0" + part.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def per_module(kind: str, module, compute: Callable[[], list], item: type, *parts: str) -> list:
    """``compute()`` (a list of ``item``), remembered under the module's parse key, ``kind`` and ``parts``.

    For what depends on one parsed module alone (validate's warnings): a warm ``validate``
    reads it back instead of working it out. A module not loaded from a file (no
    ``source_key``) is simply computed.
    """
    if not getattr(module, "source_key", ""):
        return compute()
    key = derived_key(kind, module.source_key, *parts)
    known = recall(key)
    if isinstance(known, list) and all(isinstance(value, item) for value in known):
        return known
    found = compute()
    remember(key, found)
    return found


def recall(key: str) -> Any:
    """The value remembered under ``key`` (plain values and the course's classes), or None for a miss."""
    directory = _directory()
    if directory is None:
        return None
    try:
        header, _, payload = (directory / f"{key}.json").read_bytes().partition(b"\n")
        entry = json.loads(header)
        if entry != {"key": key, "sha256": hashlib.sha256(payload).hexdigest()}:
            return None
        return decode(payload)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError, EOFError, IndexError,
            MemoryError, pickle.UnpicklingError):
        return None


def remember(key: str, value: Any) -> None:
    """Keep ``value`` under ``key``; best effort (a value this codec does not know is not kept)."""
    directory = _directory()
    if directory is None:
        return
    try:
        payload = encode(value)
    except (TypeError, ValueError, RecursionError, pickle.PicklingError):
        return
    header = json.dumps({"key": key, "sha256": hashlib.sha256(payload).hexdigest()}).encode()
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".part")
        with os.fdopen(handle, "wb") as out:
            out.write(header + b"\n" + payload)
        os.replace(temporary, directory / f"{key}.json")
        temporary = None
        _prune(directory)
    except OSError:
        pass
    finally:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass


def _prune(directory: Path) -> None:
    entries = list(directory.glob("*.json"))
    if len(entries) <= MAX_ENTRIES:
        return
    def age(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:
            return 0.0
    for old in sorted(entries, key=age)[: len(entries) - MAX_ENTRIES]:
        try:
            old.unlink()
        except OSError:
            pass


# ---------------------------------------------------------------- the codec: a pickle of known classes only
#
# Pickle, because the C unpickler rebuilds a launch's ~3.5 MB of entries in about a quarter of the
# time that JSON with an object hook took (~11 ms against ~45 ms on two cores: most of what the
# map's first frame waited for). It stays data, never code: writing refuses any object that is not
# a plain value or one of the parsing packages' dataclasses and enums (``reducer_override``), and
# reading resolves no global but those same classes (``find_class``, the pickle documentation's
# "restricting globals"), so a forged entry can at most build a course object, never call anything
# else. The payload's checksum is still checked first.

_PLAIN = (type(None), bool, int, float, str, list, tuple, dict)


class _CoursePickler(pickle.Pickler):
    def reducer_override(self, obj):
        # called for every object but None, bools and exact ints, floats, strs, lists, tuples, dicts, ...
        if isinstance(obj, type):  # a class (an enum's or a dataclass's, by reference)
            if _known_class_or_none(_name(obj)) is obj:
                return NotImplemented
        elif isinstance(obj, enum.Enum) or dataclasses.is_dataclass(obj):
            if _known_class_or_none(_name(type(obj))) is type(obj):
                return NotImplemented
        elif type(obj) in _PLAIN:
            return NotImplemented
        raise TypeError(f"cannot cache a {type(obj).__name__}")


class _CourseUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        cls = _known_class_or_none(f"{module}.{name}")
        if cls is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not one of the course's classes")
        return cls


def encode(value: Any) -> bytes:
    out = io.BytesIO()
    _CoursePickler(out, protocol=5).dump(value)
    return out.getvalue()


def decode(payload: bytes) -> Any:
    return _CourseUnpickler(io.BytesIO(payload)).load()


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


_classes: dict[str, type] = {}


def _known_class(name: str) -> type:
    cls = _known().get(name)
    if cls is None:  # perhaps defined in a module loaded since: look once more
        _classes.clear()
        cls = _known()[name]
    return cls


def _known_class_or_none(name: str) -> type | None:
    try:
        return _known_class(name)
    except KeyError:
        return None


def _known() -> dict[str, type]:
    """The dataclasses and enums defined in the parsing packages' loaded modules, by qualified name."""
    if not _classes:
        import tutor.course.schema  # noqa: F401 - make sure the schema's classes are loaded

        for module_name, module in list(sys.modules.items()):
            if module is None or not module_name.startswith(PACKAGES):
                continue
            for obj in vars(module).values():
                if isinstance(obj, type) and obj.__module__ == module_name and (
                        dataclasses.is_dataclass(obj) or issubclass(obj, enum.Enum)):
                    _classes[_name(obj)] = obj
    return _classes
