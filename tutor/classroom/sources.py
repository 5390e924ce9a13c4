"""Where a class report reads a learner from: an exported profile (JSON) or a profile itself (SQLite).

On JupyterHub each learner's tutor keeps its profile in their own home
(``~/.local/share/pytorch-tutor/profiles/default.sqlite``); an instructor should not have to ask
thirty learners to run ``profile export``. Both kinds of file are untrusted (a learner owns
theirs, and the report may run as root): an export is read as JSON only; a profile's bytes are
read once (size-capped, a link refused: ``O_NOFOLLOW``) and opened by SQLite from memory, so
SQLite never opens a file beside it (a learner's ``-shm`` or ``-wal`` made a link to a file of
root's), and the learner's tutor, which may have it open, is never disturbed; the schema's own
code is not trusted, and every attempt row is validated by the same reader as ``profile import``.
A file that fails is left out with the reason; nothing is written anywhere.

The learner's name: the one an export carries (``profile export --name``); for a profile, its
file name (less serve-ui's ``class-``) unless that is ``default``; then the home it lies in
(``HOME/.local/share/pytorch-tutor/profiles/default.sqlite``: a hub's learner, whose home the
instructor named on the command line) or else the account that owns the file. The home comes first
because many hubs run every learner's server as one account (DockerSpawner's and KubeSpawner's
``jovyan``, SimpleLocalProcessSpawner's hub user): the owner then names nobody apart.
"""

from __future__ import annotations

import errno
import json
import os
import pwd
import sqlite3
import stat
from pathlib import Path

from tutor.locations import APP_NAME, CLASS_PROFILE_PREFIX
from tutor.progress.store import Attempt
from tutor.safe_text import safe_line
from tutor.progress.transfer import MAX_ATTEMPTS, MAX_IMPORT_BYTES, export_learner, read_attempt, read_export

PROFILE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
DEFAULT_PROFILE_DIR = (".local", "share", APP_NAME, "profiles")  # under a learner's home
MAX_PROFILE_BYTES = MAX_IMPORT_BYTES * 4  # a profile keeps cards and drafts beside the attempts
_COLUMNS = ("course", "at", "module", "item", "kind", "answers", "observed", "verdict", "correct", "seconds",
            "confidence")


def is_profile(path: Path) -> bool:
    """A profile database rather than an export: by its name, or by SQLite's own header."""
    if path.suffix in PROFILE_SUFFIXES:
        return True
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def learner_name(path: Path) -> str:
    """The name a report shows for ``path`` before it is made one printable line ("" for none)."""
    if not is_profile(path):
        return export_learner(path)
    if path.stem.startswith(CLASS_PROFILE_PREFIX):  # serve-ui's class mode: the learner's own name
        return path.stem[len(CLASS_PROFILE_PREFIX):]
    if path.stem != "default":
        return path.stem
    if path.parent.parts[-4:] == DEFAULT_PROFILE_DIR and len(path.parent.parts) > 4:
        return path.parent.parts[-5]
    try:
        return pwd.getpwuid(path.stat().st_uid).pw_name
    except (KeyError, OSError):
        return ""


def read_attempts(path: Path) -> list[Attempt]:
    """The learner's attempts; ``ValueError`` naming the file and the problem."""
    return read_profile(path) if is_profile(path) else read_export(path)


def read_profile(path: Path) -> list[Attempt]:
    """A profile's attempts, read from a copy in memory and validated row by row (``profile import``'s reader)."""
    data = _read_bytes(path, MAX_PROFILE_BYTES)
    db = sqlite3.connect(":memory:")
    try:
        db.deserialize(data)
        db.execute("PRAGMA trusted_schema = OFF")  # the schema's own code (views, triggers) is not trusted
        db.execute("PRAGMA query_only = ON")
        columns = {row[1] for row in db.execute("PRAGMA table_info(attempts)")}
        if not set(_COLUMNS) <= columns:
            raise ValueError(f"{path} is not a pytorch-tutor profile")
        rows = db.execute(f"SELECT {', '.join(_COLUMNS)} FROM attempts ORDER BY id LIMIT ?",
                          (MAX_ATTEMPTS + 1,)).fetchall()
    except (sqlite3.Error, OverflowError) as exc:
        raise ValueError(f"{path} is not a readable pytorch-tutor profile: {exc}") from None
    finally:
        db.close()
    if len(rows) > MAX_ATTEMPTS:
        raise ValueError(f"{path}: more than {MAX_ATTEMPTS} attempts is not a profile")
    attempts = []
    for index, row in enumerate(rows):
        raw = dict(zip(_COLUMNS, row))
        try:
            for key in ("answers", "observed", "verdict"):
                raw[key] = json.loads(raw[key]) if isinstance(raw[key], str) else raw[key]
            attempts.append(read_attempt(raw, index))
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"{path}: {str(exc)[:200]}") from None
    return attempts


def _read_bytes(path: Path, limit: int) -> bytes:
    """The whole file, never through a link, at most ``limit`` bytes; ``ValueError`` otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        raise ValueError(f"{path} could not be opened: {exc.strerror}"
                         + (" (a link: name the file itself)" if exc.errno == errno.ELOOP else "")) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path} is not a file")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise ValueError(f"{path} is larger than {limit >> 20} MiB")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_learners(paths: list[Path], names: list[str]) -> tuple[list[tuple[str, list[Attempt]]], list[str]]:
    """Each readable learner as (name, attempts), and one line per file left out, with the reason."""
    read, refused = [], []
    for path, name in zip(paths, names):
        try:
            read.append((name, read_attempts(path)))
        except ValueError as exc:
            refused.append(safe_line(str(exc), 300))
    return read, refused
