"""An on-disk scratch directory (tiers 2 and 3): walking, measuring and removing a tree a snippet shaped."""

from __future__ import annotations

import errno
import os
import stat

# ---------------------------------------------------------------- an on-disk scratch directory (tiers 2 and 3)
#
# Without a mount namespace the scratch directory is an ordinary host directory that the snippet
# owns, so everything below must hold against a tree the snippet shaped on purpose: directories
# it made unreadable or unsearchable for itself (0300, 0000), chains deeper than any descriptor
# limit or the recursion limit (shutil.rmtree and os.fwalk fail on both), symlinks where a
# directory was a moment ago, and files it keeps after unlinking them. So the walk is iterative
# and holds one directory descriptor at a time (it climbs back through ".." and checks that it
# arrived where it came from), never follows a symlink, and, as the owner (or root), gives a
# directory back the owner's rwx bits when the snippet took them away.

_DIR_PATH = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_READ = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC  # only ever through /proc/self/fd/N (no lookup)


class TreeChanged(OSError):
    """A directory moved while the walk was inside it (only a live run can do that)."""


def _owner_rights(fd: int) -> None:
    """Give the directory behind ``fd`` its owner's rwx bits (we are its owner, or root)."""
    os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(os.fstat(fd).st_mode) | 0o700)


def _readable(path_fd: int) -> int:
    """A readable descriptor on the directory behind an O_PATH descriptor (no path lookup involved)."""
    try:
        return os.open(f"/proc/self/fd/{path_fd}", _DIR_READ)
    except PermissionError:
        _owner_rights(path_fd)
        return os.open(f"/proc/self/fd/{path_fd}", _DIR_READ)


def _open_dir_at(parent: int | None, name: str) -> int:
    """Open directory ``name`` (below ``parent``, or an absolute path) for reading, never through a symlink."""
    try:
        path_fd = os.open(name, _DIR_PATH, dir_fd=parent)
    except PermissionError:
        if parent is None:
            raise
        _owner_rights(parent)  # no search permission on the parent
        path_fd = os.open(name, _DIR_PATH, dir_fd=parent)
    try:
        return _readable(path_fd)
    finally:
        os.close(path_fd)


def _at(fd: int, call, *args, **kwargs):
    """``call(..., dir_fd=fd)``, giving the directory its owner's rights back once if that is what failed."""
    try:
        return call(*args, dir_fd=fd, **kwargs)
    except PermissionError:
        _owner_rights(fd)
        return call(*args, dir_fd=fd, **kwargs)


def walk_tree(top: str, on_entry=None, remove: bool = False) -> None:
    """Visit (``on_entry(stat_result)``) and optionally remove everything below ``top``, iteratively.

    Entries that vanish meanwhile are skipped; a directory that moved while the walk was in
    it raises :class:`TreeChanged` (the walk never climbs anywhere it did not come from).
    Directories on another filesystem are neither entered nor removed.
    """
    fd = _open_dir_at(None, top)
    try:
        here = os.fstat(fd)
        dev = here.st_dev
        stack: list[tuple[tuple[int, int], list[str], str]] = []
        pending = os.listdir(fd)
        while True:
            if pending:
                name = pending.pop()
                try:
                    st = _at(fd, os.stat, name, follow_symlinks=False)
                except (FileNotFoundError, NotADirectoryError):
                    continue
                if on_entry is not None:
                    on_entry(st)
                if stat.S_ISDIR(st.st_mode):
                    if st.st_dev != dev:
                        continue
                    try:
                        child = _open_dir_at(fd, name)
                    except (FileNotFoundError, NotADirectoryError):
                        continue
                    seen = os.fstat(child)
                    if (seen.st_dev, seen.st_ino) != (st.st_dev, st.st_ino):
                        os.close(child)
                        raise TreeChanged(errno.EAGAIN, f"{name} changed while being walked")
                    stack.append(((here.st_dev, here.st_ino), pending, name))
                    os.close(fd)
                    fd, here = child, seen
                    pending = os.listdir(fd)
                elif remove:
                    try:
                        _at(fd, os.unlink, name)
                    except FileNotFoundError:
                        pass
                continue
            if not stack:
                break
            expected, pending, name = stack.pop()
            up = _at(fd, os.open, "..", _DIR_PATH)
            try:
                parent = _readable(up)
            finally:
                os.close(up)
            os.close(fd)
            fd, here = parent, os.fstat(parent)
            if (here.st_dev, here.st_ino) != expected:
                raise TreeChanged(errno.EAGAIN, "a directory moved while being walked")
            if remove:
                try:
                    _at(fd, os.rmdir, name)
                except (FileNotFoundError, OSError) as exc:
                    if exc.errno not in (errno.ENOENT, errno.ENOTEMPTY, errno.EBUSY):
                        raise
    finally:
        os.close(fd)


def remove_tree(path: str) -> bool:
    """Remove ``path`` and everything below it whatever the snippet did to it; True when it is gone.

    Never raises: it is cleanup, run from the zygote's loop and from the client at exit.
    """
    try:
        os.lstat(path)
    except OSError:
        return True
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            walk_tree(path, remove=True)
            os.rmdir(path)
        else:
            os.unlink(path)
    except OSError:
        pass
    except RecursionError:  # cannot happen with the walk above; a cleanup must not kill its caller anyway
        pass
    return not os.path.lexists(path)


class OverQuota(Exception):
    pass


class ScratchUsage:
    """What one tier-2 run holds on disk: its scratch tree, plus files it keeps after unlinking them.

    A directory walk alone is blind to a file that is unlinked while still open or mapped
    (it keeps its blocks until the last reference goes), so this also looks at the runner's
    /proc/PID/fd and /proc/PID/maps. That covers every reference a tier-2 runner can hold:
    it is a single process whose threads must share its fd table (seccomp: clone needs
    CLONE_FILES), and it cannot pass descriptors (sendmsg is refused) or reach io_uring.
    A deleted file held only by a mapping cannot be measured without CAP_SYS_ADMIN (its
    /proc/PID/map_files link), so it counts as the largest file RLIMIT_FSIZE lets it be.

    Why not the filesystem's free space (statvfs)? The scratch shares its filesystem with
    the host, whose own writes would be charged to the snippet. Why not a size-capped
    filesystem? Mounting one needs privileges tier 2 does not have (tier 1 uses a tmpfs).
    """

    def __init__(self, scratch: str, max_bytes: int, max_entries: int, file_size: int):
        self.scratch = scratch.rstrip("/")
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.file_size = file_size
        self.bytes = 0
        self.entries = 0
        self.seen: set[int] = set()
        self.dev = -1

    def add(self, st) -> None:
        if st.st_ino in self.seen and st.st_dev == self.dev:
            return
        self.seen.add(st.st_ino)
        self.entries += 1
        self.bytes += st.st_blocks * 512
        if self.entries > self.max_entries or self.bytes > self.max_bytes:
            raise OverQuota()

    def _ours(self, path: str) -> bool:
        return path.startswith(self.scratch + "/")

    def measure(self, pid: int | None) -> None:
        """Raise :class:`OverQuota` when over; :class:`OSError` when the run could not be measured."""
        self.dev = os.stat(self.scratch, follow_symlinks=False).st_dev
        walk_tree(self.scratch, on_entry=self.add)
        if pid is None:
            return
        fd_dir = f"/proc/{pid}/fd"
        for name in os.listdir(fd_dir):
            link = f"{fd_dir}/{name}"
            try:
                target = os.readlink(link)
            except FileNotFoundError:
                continue
            except OSError:
                target = None  # too long to name (a deep tree): judge by the filesystem alone
            if target is not None and not self._ours(target):
                continue
            try:
                st = os.stat(link)
            except OSError:
                continue
            if st.st_dev == self.dev and stat.S_ISREG(st.st_mode):
                self.add(st)
        with open(f"/proc/{pid}/maps", "rb") as f:
            maps = f.read()
        needle = (self.scratch + "/").encode()
        if needle not in maps:
            return
        for line in maps.splitlines():
            fields = line.split(None, 5)
            if len(fields) < 6 or not fields[5].startswith(needle) or not fields[5].endswith(b" (deleted)"):
                continue
            inode = int(fields[4])
            if inode in self.seen:
                continue
            try:  # exact where we may (root): the mapping's own link to the file
                st = os.stat(f"/proc/{pid}/map_files/{fields[0].decode()}")
                self.add(st)
                continue
            except OSError:
                pass
            self.seen.add(inode)
            self.entries += 1
            self.bytes += self.file_size
            if self.entries > self.max_entries or self.bytes > self.max_bytes:
                raise OverQuota()


