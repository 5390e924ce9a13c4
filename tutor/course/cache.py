"""A cache of parsed module files, so that launching the tutor does not re-read 2.7 MB of YAML.

Parsing the built-in course (YAML events, the schema, a syntax check of every snippet) costs
about 0.4 s of a launch; reading it back from here costs a few milliseconds. An entry is keyed
by a hash of everything the parse depends on: the file's bytes, the name errors are reported
under, and the source of the code that parses it (``tutor/course`` and ``tutor/judge``), so an
edited lesson or an upgraded tutor simply misses and is parsed again.

The cache is data, never code: entries are plain values and the parsing packages' own dataclasses
and enums (only those, by name: see the codec below), with an HMAC over the key and the payload under a
per-install secret (``cache.key``, 0600, made on first use): whoever can write the cache directory but not
read the user's files cannot forge an entry, which would otherwise rewrite the built-in course (trusted, run
without consent) on the next launch; a forged or foreign entry is a miss. Anything unexpected (a
truncated file, a bit flip, a class that no longer exists, a field that was renamed) makes the
entry a miss: it is parsed again and rewritten. Nothing is ever required of the cache: when the
cache directory cannot be written, the tutor just parses every time.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import hmac
import io
import json
import os
import pickle
import secrets
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from tutor.course.errors import LessonError

CACHE_FORMAT = 3  # 3: an HMAC under a per-install secret (2 had a bare checksum; 1 was JSON with an object hook)
MAX_ENTRIES = 400  # an author's edits leave old entries behind; past this the oldest go
PACKAGES = ("tutor.course", "tutor.judge")  # the code a parse depends on, and the only classes an entry may name
_SUBDIR = "parsed-modules"
_SECRET_FILE = "cache.key"
_SECRET_BYTES = 32

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


_secret: bytes | None = None
_secret_home: Path | None = None


def _directory() -> Path | None:
    """The entries' directory, or None when there is none or no secret to sign entries with (no caching)."""
    from tutor.locations import cache_dir

    try:
        path = cache_dir() / _SUBDIR
        path.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError):  # ValueError: no home to keep a cache in (locations.NoHomeError)
        return None
    return path if _install_secret(path.parent) is not None else None


def _install_secret(home: Path) -> bytes | None:
    """This install's secret, read (or made, 0600) once per process and cache directory; None if unusable.

    Only a regular file owned by this user and closed to everyone else counts: a cache directory others
    can write lets them delete the file (then a new secret is made, which they cannot read) but never
    plant one of their own (it would not be ours) or read ours.
    """
    global _secret, _secret_home
    if _secret_home != home:
        _secret, _secret_home = _read_or_make_secret(home / _SECRET_FILE), home
    return _secret


def _read_or_make_secret(path: Path) -> bytes | None:
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            except FileExistsError:  # another launch made it a moment ago: read that one
                continue
            except OSError:
                return None
            made = secrets.token_bytes(_SECRET_BYTES)
            try:
                os.fchmod(fd, 0o600)  # whatever the umask
                os.write(fd, made)
                return made
            except OSError:
                return None
            finally:
                os.close(fd)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077
                    or info.st_size != _SECRET_BYTES):
                return None
            value = os.read(fd, _SECRET_BYTES + 1)
            return value if len(value) == _SECRET_BYTES else None
        except OSError:
            return None
        finally:
            os.close(fd)
    return None


def _seal(key: str, payload: bytes) -> str:
    assert _secret is not None  # _directory() found one before any entry is read or written
    return hmac.new(_secret, key.encode() + b"\0" + payload, hashlib.sha256).hexdigest()


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
        if not (isinstance(entry, dict) and entry.keys() == {"key", "hmac"} and entry["key"] == key
                and isinstance(entry["hmac"], str) and hmac.compare_digest(entry["hmac"], _seal(key, payload))):
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
    header = json.dumps({"key": key, "hmac": _seal(key, payload)}).encode()
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
# else. The entry's HMAC is still checked first.

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
