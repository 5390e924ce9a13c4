"""Every path the tutor reads or writes, in one place."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import stat
from pathlib import Path
from typing import Iterator

import platformdirs

HOME_ENV = "PYTORCH_TUTOR_HOME"  # overrides where profiles live (tests, instructors' labs)
CACHE_ENV = "PYTORCH_TUTOR_CACHE"  # overrides where derived data lives (a test session shares one)
APP_NAME = "pytorch-tutor"


def builtin_course_dir() -> Path:
    """The course that ships with the tutor (``lessons/`` in a checkout, ``tutor/course_data`` in a wheel)."""
    spec = importlib.util.find_spec("tutor.course_data")
    if spec is not None and spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0])
    return Path(__file__).resolve().parent.parent / "lessons"


def data_dir() -> Path:
    """The learner's own: their answers, their workspace. Created 0700 (see ``private_files``)."""
    path = _data_path()
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    return path


class NoHomeError(ValueError):
    """Where the learner's data lives cannot be told: no HOME and no passwd entry (a bare uid, a hub's service)."""


def _platform_path(where) -> Path:
    """``platformdirs``' answer, or a clear refusal where it cannot find a home (it raises RuntimeError)."""
    try:
        return where(APP_NAME)
    except RuntimeError:
        raise NoHomeError(f"this account has no home directory to keep the tutor's data in (HOME is unset and it "
                          f"has no passwd entry): set {HOME_ENV} to a directory of yours") from None


def _data_path() -> Path:
    override = os.environ.get(HOME_ENV)
    return Path(override).expanduser() if override else _platform_path(platformdirs.user_data_path)


# On a shared machine (a JupyterHub with system users, a lab server) a profile readable by others
# gives away a learner's answers, so whatever the tutor keeps is its user's alone.
PRIVATE_DIR, PRIVATE_FILE = 0o700, 0o600


@contextlib.contextmanager
def private_files() -> Iterator[None]:
    """Everything created inside (files 0600, directories 0700, whatever the umask said: a umask
    of 022 would leave them readable by every user), and by the processes started inside."""
    previous = os.umask(0o077)
    os.umask(previous | 0o077)
    try:
        yield
    finally:
        os.umask(previous)


def make_data_private() -> list[str]:
    """Take away what others may read or enter in the data directory an earlier tutor (or a looser
    umask) left: the directory itself, its profile and workspace directories, the profile files.
    Returns a note for each change, and for each one it could not make; nothing is created."""
    try:
        root = _data_path()
    except NoHomeError:  # no data directory to tighten; a command that needs one says so itself
        return []
    notes = []
    targets = [(root, PRIVATE_DIR), (root / "profiles", PRIVATE_DIR), (root / "workspace", PRIVATE_DIR)]
    try:
        targets += [(p, PRIVATE_FILE) for p in sorted((root / "profiles").iterdir()) if p.name.endswith(
            (".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite-journal"))]
    except OSError:  # no profiles yet
        pass
    for path, mode in targets:
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode) or not stat.S_IMODE(info.st_mode) & 0o077:
            continue  # a link is left alone (chmod would follow it); this one is private already
        try:
            os.chmod(path, stat.S_IMODE(info.st_mode) & mode)
            notes.append(f"{path} was readable by other users ({stat.S_IMODE(info.st_mode):04o}); "
                         f"it is now {stat.S_IMODE(info.st_mode) & mode:04o}")
        except OSError as exc:
            notes.append(f"{path} is readable by other users and could not be made private "
                         f"({exc.strerror or exc}): chmod {mode:o} it yourself")
    return notes


def cache_dir() -> Path:
    """Where derived data lives (the parsed-course cache): safe to delete at any time."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    override = os.environ.get(HOME_ENV)
    return Path(override).expanduser() / "cache" if override else _platform_path(platformdirs.user_cache_path)


def compile_cache_dir(course_root: Path) -> Path:
    """Where torch.compile's kernels for one course are kept between runs (one directory per course)."""
    import hashlib

    key = hashlib.sha256(str(Path(course_root).resolve()).encode()).hexdigest()[:24]
    return data_dir() / "compile-cache" / key


CLASS_PROFILE_PREFIX = "class-"  # serve-ui's class mode keeps learner NAME's progress in the profile class-NAME


def valid_profile_name(name: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name))


def profile_path(name: str = "default") -> Path:
    if not valid_profile_name(name):
        raise ValueError(f"profile name {name!r}: use letters, digits, '.', '_' or '-' (at most 64)")
    directory = data_dir() / "profiles"
    directory.mkdir(parents=True, exist_ok=True)
    return directory / f"{name}.sqlite"


def inside(root: Path, name: str) -> Path:
    """``root / name``, refused unless it stays inside ``root`` once links are resolved.

    Every path built from lesson data goes through here: ids are validated by the
    schema already, and this is the second wall should a bad id ever get past it.
    """
    if not name or "/" in name or "\\" in name or "\0" in name or name in (".", ".."):
        raise ValueError(f"{name[:80]!r} is not a plain file name")
    path = root / name
    resolved_root = root.resolve()
    if path.resolve().parent != resolved_root:
        raise ValueError(f"{name[:80]!r} would lie outside {root}")
    return path


def workspace_dir(profile: str = "default") -> Path:
    """Where exercise files are written for the learner to edit in their own editor."""
    if not valid_profile_name(profile):
        raise ValueError(f"profile name {profile!r}: use letters, digits, '.', '_' or '-' (at most 64)")
    path = data_dir() / "workspace" / profile
    path.mkdir(parents=True, exist_ok=True)
    return path
