"""The lab workspace in a profile export: the learner's own files, carried between machines.

On export every regular file under the profile's workspace goes in as text. On import
every path is checked before anything is written: relative, plain components, no
'..', contained in the workspace once links are resolved, and capped in size and
count. A local file that differs is kept beside the imported one, never overwritten.

An imported file is someone else's code until the learner opens its lab: each one written is
marked (``imported_marker``), and a marked lab file is not "the learner's" (``tutor.workspace``:
`--package mine` and chained labs run the stage's reference) until opening the lab clears the
mark. The marks live in a ``.imported`` folder, a name no export can carry (a component must
start with a letter or digit), so an import can neither forge nor remove one.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

MAX_FILE_BYTES = 1 << 20  # a lab file is a few KiB; a megabyte is not a lab file
MAX_TOTAL_BYTES = 16 << 20
MAX_FILES = 2000
MAX_DEPTH = 4  # courses/<course>/<lab folder>/<file>
COURSES = "courses"  # every course's files under courses/<course>/ (tutor/workspace.py)
_COMPONENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
IMPORTED = ".imported"  # beside imported files: one empty mark per file not yet opened by the learner


def imported_marker(path: Path) -> Path:
    """The mark that ``path`` came from an import and its lab has not been opened since."""
    return path.parent / IMPORTED / path.name


def collect(workspace: Path) -> tuple[list[dict], list[str]]:
    """(files as {"path", "text"}, what was left out and why) for every file under ``workspace``."""
    files: list[dict] = []
    skipped: list[str] = []
    total = 0
    if not workspace.is_dir():
        return files, skipped
    for path in sorted(workspace.rglob("*")):
        relative = path.relative_to(workspace).as_posix()
        if IMPORTED in path.relative_to(workspace).parts:
            continue  # this machine's marks, never carried
        if path.is_symlink() or not path.is_file():
            if path.is_symlink():
                skipped.append(f"{relative}: a link")
            continue
        if path_problem(relative):
            skipped.append(f"{relative}: {path_problem(relative)}")
            continue
        size = path.stat().st_size
        if size > MAX_FILE_BYTES or total + size > MAX_TOTAL_BYTES or len(files) >= MAX_FILES:
            skipped.append(f"{relative}: too large to carry")
            continue
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            skipped.append(f"{relative}: not UTF-8 text")
            continue
        files.append({"path": relative, "text": text})
        total += size
    return files, skipped


def path_problem(relative: str) -> str:
    """Why ``relative`` may not name a workspace file, or ``""``."""
    if not isinstance(relative, str) or not relative:
        return "not a path"
    if relative.startswith("/") or "\\" in relative or "\0" in relative:
        return "not a relative path"
    parts = relative.split("/")
    if len(parts) > MAX_DEPTH:
        return "nested too deeply"
    if not all(_COMPONENT.fullmatch(p) and ".." not in p for p in parts):
        return "a path component that is not a plain name"
    return ""


def is_per_course(relative: str) -> bool:
    parts = relative.split("/")
    return len(parts) >= 3 and parts[0] == COURSES


def legacy_path(relative: str) -> str:
    """Where a lab file of a version-2 export (kept before files were per course) goes: the built-in course."""
    from tutor.progress.store import BUILTIN_COURSE_ID

    return f"{COURSES}/{BUILTIN_COURSE_ID}/{relative}"


def validate(raw: object) -> list[tuple[str, str]]:
    """The export's workspace files as (relative path, text); ``ValueError`` naming the first bad one."""
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_FILES:
        raise ValueError(f"the workspace list is malformed or holds more than {MAX_FILES} files")
    files, total, seen = [], 0, set()
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            raise ValueError(f"workspace file {i} is malformed")
        relative = entry.get("path")
        if (why := path_problem(relative)):
            raise ValueError(f"workspace file {str(relative)[:80]!r}: {why}")
        if relative in seen:
            raise ValueError(f"workspace file {relative!r} is listed twice")
        size = len(entry["text"].encode("utf-8"))
        total += size
        if size > MAX_FILE_BYTES or total > MAX_TOTAL_BYTES:
            raise ValueError(f"workspace file {relative!r}: larger than the import allows")
        seen.add(relative)
        files.append((relative, entry["text"]))
    return files


def contained(workspace: Path, relative: str) -> Path:
    """``workspace / relative``, refused unless it stays inside once links are resolved."""
    target = workspace / relative
    root = workspace.resolve()
    if not target.resolve().is_relative_to(root) or target.resolve() == root:
        raise ValueError(f"workspace file {relative!r} would lie outside the workspace")
    return target


class Staged:
    """Imported files written beside their places under temporary names, not yet in place.

    ``stage`` checks every target and writes every text before the profile's rows are committed,
    so a file that cannot be written fails the import while nothing of it is visible; ``publish``
    (after the commit) only renames, and undoes its own renames if one fails; ``discard`` (the
    rows failed) removes the temporaries. The import is then the rows and the files, or nothing."""

    def __init__(self) -> None:
        self.pending: list[tuple[Path, Path]] = []  # (temporary, target)
        self.written = 0

    def discard(self) -> None:
        for temporary, _ in self.pending:
            temporary.unlink(missing_ok=True)
        self.pending = []

    def publish(self) -> tuple[int, list[str]]:
        """Move every staged file into place; return (files written, local files kept aside)."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        done: list[tuple[Path, Path | None, Path]] = []  # (target, aside, marker) for the undo
        try:
            for temporary, target in self.pending:
                aside = None
                if target.exists():
                    aside = target.with_name(f"{target.stem}.before-import-{stamp}{target.suffix}")
                    target.rename(aside)
                mark = imported_marker(target)  # before the file: a crash between leaves a mark, never an unmarked file
                mark.parent.mkdir(exist_ok=True)
                mark.touch()
                done.append((target, aside, mark))
                temporary.rename(target)
        except OSError as exc:
            for target, aside, mark in reversed(done):
                target.unlink(missing_ok=True)
                if aside is not None:
                    aside.rename(target)
                mark.unlink(missing_ok=True)
            self.discard()
            raise ValueError(f"a workspace file could not be put in place ({exc.strerror}); "
                             "the files were put back as they were") from None
        self.pending = []
        return len(done), [str(aside) for _, aside, _ in done if aside is not None]


def stage(workspace: Path, files: list[tuple[str, str]]) -> Staged:
    """Check every target and write every text beside it under a temporary name (see ``Staged``)."""
    targets = [(contained(workspace, relative), text) for relative, text in files]  # every check before a write
    staged = Staged()
    try:
        for target, text in targets:
            if target.is_symlink() or (target.exists() and not target.is_file()):
                raise ValueError(f"{target} is not a plain file; nothing of the import was written")
            if target.exists() and target.read_bytes() == text.encode("utf-8"):
                continue  # already there, as it is
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(f".{target.name}.importing-{os.getpid()}")
            with open(temporary, "x", encoding="utf-8") as f:  # O_EXCL: never through a planted link
                staged.pending.append((temporary, target))
                f.write(text)
    except OSError as exc:
        staged.discard()
        raise ValueError(f"a workspace file could not be written ({exc.strerror}); nothing of the import "
                         "was written") from None
    except ValueError:
        staged.discard()
        raise
    return staged
