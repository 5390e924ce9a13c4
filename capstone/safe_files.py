"""Every read and write of a capstone workspace, done so that nothing in it is trusted.

`pytorch-tutor capstone <stage> --package mine` runs the learner's code in the sandbox with the
workspace writable, so after such a run anything in the workspace may have been planted: a link
out of it (`corpus/train.txt -> /etc/...`, `eval -> /elsewhere`), a FIFO, a pickle where a
checkpoint should be. The reference commands run on the host, so here every path below the
workspace root is walked one component at a time from the root's directory descriptor with
`O_NOFOLLOW`: a link, at any depth, is refused with a message, never followed; only regular
files are read, under a size cap; a file is written as a new file (`O_CREAT | O_EXCL`, a fresh
temporary name) in a directory reached the same way, then renamed over its name within that
directory, so no write ever lands anywhere but there. What is read is data only: JSON (size and
nesting capped) and tensors through `torch.load(weights_only=True)`; never a pickle, never a
`.pt2` (`torch.export.load` unpickles: see `capstone.export.load_workspace`).

The root is what the user named (`--workspace DIR`): trusted as given, links in it included.
`Workspace(root)` declares it (`trust_root`); a path under no declared root (a lab's test file in
its working directory) is walked from its own parent directory the same way.

Standard library only (torch is imported by the two tensor helpers, when they are called).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
import warnings
from pathlib import Path

from capstone import CapstoneError

MAX_FILE_BYTES = 2 << 30  # a token file or a checkpoint of the course's models is far below this
MAX_JSON_BYTES = 16 << 20  # a report or a tokenizer is a few hundred KiB
MAX_JSON_DEPTH = 32  # the capstone's JSON nests 4 deep
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_roots: set[str] = set()


class RefusedFile(CapstoneError):
    """A workspace path the commands will not use: a link, a special file, a non-data file."""


class MissingFile(CapstoneError, FileNotFoundError):
    """A workspace file that is not there (an OSError too, as `open` would raise)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.strerror = "No such file or directory"

    def __str__(self) -> str:
        return self.args[0]


def trust_root(root: str | os.PathLike) -> None:
    """Declare a workspace root: paths below it are walked from it, without following any link."""
    _roots.add(os.path.abspath(root))


def _root_of(full: str) -> str | None:
    """The declared root `full` is (or lies below), the deepest if several."""
    return max((r for r in _roots if full == r or full.startswith(r.rstrip("/") + "/")), key=len, default=None)


def in_a_workspace(path: str | os.PathLike) -> bool:
    """Whether `path` lies below a declared workspace root (so it may be anyone's)."""
    full = os.path.abspath(path)
    return _root_of(full) not in (None, full)


def _anchor(path: str | os.PathLike) -> tuple[str, list[str]]:
    """(the trusted directory the walk starts at, the components below it) for `path`."""
    full = os.path.abspath(path)
    root = _root_of(full)
    if root is None:
        root = os.path.dirname(full)
    parts = [p for p in full[len(root):].split("/") if p]
    return root, parts


def _refused(path, why: str) -> RefusedFile:
    return RefusedFile(f"{path}: {why}; the capstone's commands never follow a link or read a special file "
                       "in a workspace (a run of your package may have left it there): remove it, then run "
                       "the command that makes it again")


def _step(fd: int, name: str, path, create: bool) -> int:
    """The directory `name` inside directory `fd`, opened without following a link (made if `create`)."""
    for attempt in (0, 1):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create or attempt:
                raise MissingFile(f"{path} does not exist") from None
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=fd)
        except OSError as e:  # ELOOP (a link), ENOTDIR (a file), EACCES...
            kind = _kind(fd, name)
            raise _refused(path, f"{name} is {kind}" if kind in (LINK, SPECIAL, FILE)
                           else f"cannot open {name} ({e.strerror})") from None
    raise AssertionError("unreachable")


LINK, SPECIAL, DIRECTORY, FILE = "a link", "a special file", "a directory", "a file"


def _kind(fd: int, name: str) -> str:
    """What `name` in directory `fd` is, not following a link: LINK, SPECIAL, DIRECTORY, FILE, or "" (nothing)."""
    try:
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
    except OSError:
        return ""
    if stat.S_ISLNK(mode):
        return LINK
    return DIRECTORY if stat.S_ISDIR(mode) else FILE if stat.S_ISREG(mode) else SPECIAL


@contextlib.contextmanager
def directory(path: str | os.PathLike, create: bool = False):
    """The descriptor of directory `path`, every component below its root walked without a link."""
    root, parts = _anchor(path)
    if create:
        os.makedirs(root, exist_ok=True)
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise MissingFile(f"{root} does not exist") from None
    except OSError as e:
        raise CapstoneError(f"cannot open {root}: {e.strerror}") from None
    try:
        for name in parts:
            if name in (".", ".."):
                raise _refused(path, f"'{name}' in a workspace path")
            inner = _step(fd, name, path, create)
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def reading(path: str | os.PathLike, limit: int = MAX_FILE_BYTES):
    """A binary file object of the regular file `path`, opened without following a link."""
    path = Path(path)
    with directory(path.parent) as dir_fd:
        try:
            fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        except FileNotFoundError:
            raise MissingFile(f"{path} does not exist") from None
        except OSError as e:
            raise _refused(path, _kind(dir_fd, path.name) or e.strerror) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise _refused(path, DIRECTORY if stat.S_ISDIR(info.st_mode) else SPECIAL)
    if info.st_size > limit:
        os.close(fd)
        raise RefusedFile(f"{path} is {info.st_size:,} bytes, more than the {limit:,} a workspace file may be")
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as f:
        yield f


def read_bytes(path: str | os.PathLike, limit: int = MAX_FILE_BYTES) -> bytes:
    with reading(path, limit) as f:
        return f.read(limit + 1)[:limit]


def read_json(path: str | os.PathLike) -> dict:
    """A JSON object, capped in size and nesting; CapstoneError for anything else."""
    raw = read_bytes(path, MAX_JSON_BYTES)
    try:
        obj = json.loads(raw.decode("utf-8"))  # RecursionError past the interpreter's limit
        if _depth(obj) > MAX_JSON_DEPTH:
            raise ValueError(f"nested more than {MAX_JSON_DEPTH} deep")
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise RefusedFile(f"{path} is not the JSON a capstone command writes ({e}): run the command that makes it again") from None
    if not isinstance(obj, dict):
        raise RefusedFile(f"{path} does not hold a JSON object: run the command that makes it again")
    return obj


def _depth(obj) -> int:
    """How deep lists and objects nest in parsed JSON (without recursion)."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


@contextlib.contextmanager
def replacing(path: str | os.PathLike):
    """A binary file object whose bytes become `path` when the block ends without an error.

    They go to a new file (`O_EXCL`, a name no one chose) in `path`'s directory, reached without
    a link, which is then renamed over `path` within that directory: a link or a special file
    already at `path` is refused, and a crash leaves the previous file intact."""
    path = Path(path)
    with directory(path.parent, create=True) as dir_fd:
        kind = _kind(dir_fd, path.name)
        if kind in (LINK, SPECIAL, DIRECTORY):
            raise _refused(path, kind)
        tmp = f".{path.name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "w+b") as f:  # readable too: np.memmap maps it
                yield f
            os.rename(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    with replacing(path) as f:
        f.write(data)


def load_tensors(path: str | os.PathLike):
    """`torch.load(weights_only=True)` of a workspace file: tensors and plain values, never a pickle."""
    import pickle

    import torch

    with reading(path) as f, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Detected pickle protocol")  # a foreign file: refused below
        try:
            return torch.load(f, map_location="cpu", weights_only=True)
        except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, TypeError):
            raise RefusedFile(f"{path} is not a file of tensors and plain values, which is all a capstone "
                              "command loads (torch.load with weights_only=True refused it): run the command "
                              "that makes it again") from None


def save_tensors(obj, path: str | os.PathLike) -> None:
    """`torch.save` into a new file renamed over `path` (see `replacing`)."""
    import torch

    with replacing(path) as f:
        torch.save(obj, f)
