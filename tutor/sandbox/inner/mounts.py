"""Tier 1's private root: what it shows (a :class:`RootPlan`, computed once in the zygote) and building it.

The root holds read-only binds of the system and Python directories, the extra
read-only paths the caller asked for (a course's own packages), a synthetic ``/etc``,
a few device nodes, a fresh ``/proc`` and a size-capped scratch tmpfs. The tutor's own
package is never shown: where it lies inside a bound directory (an installed wheel in
site-packages) an empty tmpfs covers it, since it holds the course with its solutions.
"""

from __future__ import annotations

import errno
import os
import sys

from tutor.sandbox.inner.kernel import (MNT_DETACH, MS_BIND, MS_NOATIME, MS_NODEV, MS_NODIRATIME, MS_NOEXEC,
                                           MS_NOSUID, MS_PRIVATE, MS_RDONLY, MS_REC, MS_RELATIME, MS_REMOUNT,
                                           NOBODY, mount, pivot_root, umount)

def _locked_flags(path: str) -> int:
    """The flags a read-only remount of ``path`` must keep (the kernel refuses to clear them in a userns)."""
    f = os.statvfs(path).f_flag
    flags = 0
    for st_bit, ms_bit in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                           (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
                           (os.ST_RELATIME, MS_RELATIME)):
        if f & st_bit:
            flags |= ms_bit
    return flags


class RootPlan:
    """What the private root of a tier-1 run contains, computed once in the zygote.

    ``binds`` are host paths made visible read-only at the same place; ``links``
    are symlinks recreated as they are on the host (``/lib -> usr/lib``);
    ``files`` are small synthetic files (``/etc/passwd`` with two users).
    """

    def __init__(self, binds: list[str], links: dict[str, str], files: dict[str, str], dev_nodes: list[str],
                 masks: list[str] | None = None, held: dict[str, int] | None = None):
        self.binds = binds
        self.held = held or {}  # binds whose source is a descriptor every run keeps, not a path to look up
        self.links = links
        self.files = files
        self.dev_nodes = dev_nodes
        self.masks = masks or []  # bound directories covered by an empty tmpfs (the tutor's own package)

    def as_dict(self) -> dict:
        return {"binds": self.binds, "links": self.links, "files": sorted(self.files), "dev": self.dev_nodes,
                "masks": self.masks}


DEV_NODES = ["null", "zero", "full", "random", "urandom"]
ETC_FILES = ["ld.so.cache", "nsswitch.conf"]


def python_paths() -> list[str]:
    """The directories this interpreter loads code from: its prefixes and site-packages.

    Source checkouts on ``sys.path`` (editable installs) are left out on purpose: the
    sandbox needs torch, not the tutor or its lessons. A course that imports code of its
    own (the capstone package, helper modules) names those directories itself: the
    ``read_only`` paths the caller gives ``Sandbox`` (see ``tree.Setup.extra_ro``).
    """
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              os.path.dirname(os.path.realpath(sys.executable))}
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if os.path.basename(real) in ("site-packages", "dist-packages") or any(
                real == p or real.startswith(p.rstrip("/") + "/") for p in (sys.base_prefix, sys.prefix)):
            wanted.add(entry)
    return sorted({p for p in wanted if p and os.path.isdir(p)})


def hidden_dirs(paths: list[str]) -> list[str]:
    """The tutor's own package where it lies inside a directory the sandbox shows (an installed wheel).

    It holds the built-in course, solutions and checks included: a snippet must not be
    able to read the answers. In a source checkout it lies outside every bound path.
    """
    tutor_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    return [tutor_dir] if any(_below(tutor_dir, os.path.realpath(p)) for p in paths) else []


def _below(path: str, root: str) -> bool:
    return path != root and path.startswith(root.rstrip("/") + "/")


def without(paths: list[str], hidden: list[str]) -> list[str]:
    """``paths`` with each hidden directory cut out, for Landlock (whose rules can only add).

    A path that contains a hidden directory is replaced by its entries, recursively down
    the hidden directory's branch, leaving that one out.
    """
    out: list[str] = []
    for path in paths:
        inside = [h for h in hidden if _below(h, os.path.realpath(path))]
        if not inside:
            if not any(os.path.realpath(path) == h for h in hidden):
                out.append(path)
            continue
        try:
            entries = sorted(os.listdir(path))
        except OSError:
            continue
        out.extend(without([os.path.join(path, e) for e in entries], hidden))
    return out


def split_hidden(paths: list[str], hidden: list[str]) -> tuple[list[str], list[str]]:
    """``paths`` with each hidden file or directory cut out, for Landlock: (readable, list-only).

    Like ``without``, a path that contains a hidden one is replaced by its entries; that path
    and each directory on the way down stay listable (Landlock's READ_DIR alone), since an
    import lists a package's directory before it opens a module: without it every module
    beside the hidden one would vanish too. Reading a hidden file then fails with EACCES.
    """
    readable: list[str] = []
    listable: list[str] = []
    for path in paths:  # hidden paths may be named as the path is (/proc/self/fd/N/...) or as it resolves
        named, real = os.path.abspath(path), os.path.realpath(path)
        inside = [h for h in hidden if _below(h, named) or _below(h, real)]
        if not inside:
            if named not in hidden and real not in hidden:
                readable.append(path)
            continue
        try:
            entries = sorted(os.listdir(path))
        except OSError:
            continue
        listable.append(path)
        more, deeper = split_hidden([os.path.join(path, e) for e in entries], hidden)
        readable.extend(more)
        listable.extend(deeper)
    return readable, listable


def _chain(path: str, links: dict[str, str], targets: set[str]) -> str:
    """Resolve ``path`` component by component, noting symlinks to recreate; return the real path."""
    parts = [p for p in path.split("/") if p]
    current = ""
    for i, part in enumerate(parts):
        candidate = f"{current}/{part}"
        if os.path.islink(candidate):
            target = os.readlink(candidate)
            links[candidate] = target
            resolved = os.path.realpath(candidate)
            rest = "/".join(parts[i + 1:])
            return _chain(f"{resolved}/{rest}" if rest else resolved, links, targets)
        current = candidate
    targets.add(current or "/")
    return current or "/"


def build_plan(extra_ro: list[str] | None = None, held: dict[str, int] | None = None) -> RootPlan:
    links: dict[str, str] = {}
    wanted: set[str] = set()
    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            links[top] = os.readlink(top)
        elif os.path.isdir(top):
            wanted.add(top)
    held = held or {}
    for path in python_paths() + list(extra_ro or []) + ["/etc/alternatives", "/sys/devices/system/cpu"]:
        if path in held:  # resolved by the caller when it opened it: never looked up again
            wanted.add(path)
        elif os.path.exists(path):
            _chain(os.path.abspath(path), links, wanted)
    for name in ETC_FILES:
        if os.path.isfile(f"/etc/{name}") and not os.path.islink(f"/etc/{name}"):
            wanted.add(f"/etc/{name}")
    if os.path.islink("/etc/localtime"):
        links["/etc/localtime"] = os.readlink("/etc/localtime")
    # drop paths inside another bound path
    binds: list[str] = []
    for path in sorted(wanted, key=lambda p: (p.count("/"), p)):
        if not any(path == b or path.startswith(b.rstrip("/") + "/") for b in binds):
            binds.append(path)
    # links inside bound paths come with the bind
    links = {k: v for k, v in links.items() if not any(k.startswith(b.rstrip("/") + "/") for b in binds)}
    files = {
        "/etc/passwd": "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                       f"sandbox:x:{os.getuid() if os.getuid() else NOBODY}:{os.getgid() if os.getuid() else NOBODY}"
                       ":sandbox:/tmp:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        "/etc/group": "root:x:0:\nnogroup:x:65534:\n",
        # Names for what a loopback run meets: the uts namespace's host name, and the IPv4-mapped
        # loopback address that c10d's TCP store looks up for every client ("The hostname of the
        # client socket cannot be retrieved. err=-3" in every two-process drill's output otherwise).
        "/etc/hosts": "127.0.0.1 localhost sandbox\n::1 localhost sandbox\n::ffff:127.0.0.1 localhost\n",
        "/etc/hostname": "sandbox\n",
    }
    dev = [n for n in DEV_NODES if os.path.exists(f"/dev/{n}")]
    return RootPlan(binds, links, files, dev, hidden_dirs(binds), {p: fd for p, fd in held.items() if p in binds})


def open_dir_nofollow(path: str) -> int:
    """An O_PATH descriptor on the directory ``path`` (absolute), walked one component at a time from ``/``
    and never through a symlink (O_NOFOLLOW alone guards only the last component)."""
    fd = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in [p for p in path.split("/") if p]:
            inner = os.open(part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = inner
    except OSError:
        os.close(fd)
        raise
    return fd


def _same_dir(path: str, held: int) -> int:
    """``path`` opened again in this mount namespace, only if it is still the directory held at ``held``.

    The held descriptor was opened in the host's mount namespace, where the caller checked the path,
    and the kernel refuses a bind mount from another namespace's mount (EINVAL); so the directory is
    found again here, without following links, and must be the same inode on the same device.
    """
    try:
        fd = open_dir_nofollow(path)
    except OSError as exc:
        raise OSError(exc.errno, f"{path} was replaced since the sandbox checked it ({exc.strerror})") from None
    now, then = os.fstat(fd), os.fstat(held)
    if (now.st_dev, now.st_ino) != (then.st_dev, then.st_ino):
        os.close(fd)
        raise OSError(errno.ESTALE, f"{path} was replaced since the sandbox checked it")
    return fd


def _mkdirs(path: str) -> None:
    try:
        os.makedirs(path, mode=0o755, exist_ok=True)
    except OSError as exc:
        raise OSError(exc.errno, f"mkdir {path}: {exc.strerror}") from None


def _bind_ro(source: str, target: str, recursive: bool = True) -> None:
    if os.path.isdir(source):
        _mkdirs(target)
    else:
        _mkdirs(os.path.dirname(target))
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    mount(source, target, None, MS_BIND | (MS_REC if recursive else 0))
    mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _locked_flags(target))


def hide(base: str, hidden) -> None:
    """Cover each hidden path of the new root: a directory with an empty read-only tmpfs, a file with
    a read-only bind of an empty file nobody may read (mode 000, its only name removed), so that
    opening it fails with EACCES whatever Landlock allows (a bind under /tmp, which runs may write)."""
    mask = base + "/.hidden"
    made = False
    for path in hidden:
        target = base + path
        if os.path.islink(target) or not os.path.lexists(target):
            continue
        if os.path.isdir(target):
            mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, "size=4k,nr_inodes=8,mode=0555")
            continue
        if not made:
            os.close(os.open(mask, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o000))
            os.chmod(mask, 0o000)
            made = True
        mount(mask, target, None, MS_BIND)
        mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _locked_flags(target))
    if made:
        os.unlink(mask)


def build_root(plan: RootPlan, base: str, uid: int, gid: int, scratch_bytes: int, scratch_inodes: int,
               shm: bool, exec_ok: bool, cache: tuple[str, str] | None = None,
               output: tuple[str, str] | None = None, hidden: tuple[str, ...] = ()) -> None:
    """Build the private root at ``base`` and switch to it (caller: pid 1 of a fresh pid and mount ns).

    Afterwards ``/`` holds only read-only binds of system and Python directories,
    a synthetic ``/etc``, a few device nodes, a fresh ``/proc`` for this pid
    namespace and a size-capped tmpfs at ``/tmp`` (the scratch directory and cwd); with
    ``cache`` = (host directory, target), that one directory read-write (the compile cache);
    ``output`` likewise (the caller's output directory, ``output_dir.py``); each ``hidden`` path
    inside a bind covered (``hide``).
    """
    os.umask(0o022)  # the zygote's 077 would make the skeleton unreachable for the sandbox uid
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    # Hold every bind source open first: the tmpfs about to cover ``base`` would hide any
    # source that lives below it (a checkout or venv under /tmp, say).
    sources = {path: _same_dir(path, plan.held[path]) if path in plan.held else os.open(path, os.O_PATH | os.O_CLOEXEC)
               for path in plan.binds}
    writable = [(os.open(host, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC), target)
                for host, target in filter(None, (cache, output))]
    mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755")
    # The scratch tmpfs goes in before the binds: mounted after, it would cover any bind
    # below /tmp (a checkout or venv under /tmp) and hide the files torch imports lazily.
    _mkdirs(base + "/tmp")
    mount("tmpfs", base + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | (0 if exec_ok else MS_NOEXEC),
          f"size={scratch_bytes},nr_inodes={scratch_inodes},mode=0700,uid={uid},gid={gid}")
    for path, target in plan.links.items():
        _mkdirs(base + os.path.dirname(path))
        os.symlink(target, base + path)
    for path in plan.binds:
        _bind_ro(f"/proc/self/fd/{sources[path]}", base + path)
        os.close(sources[path])
    for fd, target in writable:  # read-write, but no devices or setuid programs
        _mkdirs(base + target)
        mount(f"/proc/self/fd/{fd}", base + target, None, MS_BIND)
        mount(None, base + target, None, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | _locked_flags(base + target))
        os.close(fd)
    for path in plan.masks:  # an empty, read-only directory where the tutor's package (and its course) was
        if os.path.isdir(base + path):
            mount("tmpfs", base + path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
                  "size=4k,nr_inodes=8,mode=0555")
    hide(base, hidden)
    for path, text in plan.files.items():
        _mkdirs(base + os.path.dirname(path))
        with open(base + path, "w") as f:
            f.write(text)
    _mkdirs(base + "/dev")
    for name in plan.dev_nodes:
        target = f"{base}/dev/{name}"
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
        mount(f"/dev/{name}", target, None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{base}/dev/{name}")
    _mkdirs(base + "/dev/shm")
    if shm:
        mount("tmpfs", base + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
              f"size={scratch_bytes},nr_inodes={scratch_inodes},mode=0700,uid={uid},gid={gid}")
    _mkdirs(base + "/proc")
    mount("proc", base + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.chdir(base)
    pivot_root(".", ".")
    umount(".", MNT_DETACH)
    os.chdir("/")
    mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


