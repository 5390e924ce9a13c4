"""Each isolation layer's status in words, from the facts the zygote reports when it is ready.

The zygote says what it found (tier, Landlock ABI, seccomp, uid, cgroup, scratch);
what that means for the learner is written here, on the UI side, for ``doctor`` and
the status line.
"""

from __future__ import annotations

from tutor.sandbox.inner.compile_cache import BUDGET_BYTES as CACHE_BUDGET  # standard library only
from tutor.sandbox.wire import (ADDRESS_SPACE, CGROUP_RUN_MEMORY, FILE_SIZE, OPEN_FILES, PROCESSES, SCRATCH_BYTES,
                                SCRATCH_INODES, Tier)


def describe_layers(facts: dict) -> dict[str, str]:
    """``{layer: status}`` for a zygote's ``ready`` facts ({} when there are none)."""
    if not facts:
        return {}
    tier = _tier(facts.get("tier"))
    abi = facts.get("landlock_abi") or 0
    uid, root = facts.get("uid"), bool(facts.get("root"))
    out: dict[str, str] = {}
    if tier == Tier.NAMESPACES:
        out["user namespace"] = "on"
        out["pid namespace"] = "on (runner is pid 2, fresh /proc)"
        out["network namespace"] = "on (no interfaces up)"
        out["ipc, uts namespaces"] = "on"
        out["mount namespace"] = ("on (private read-only root: system, Python and venv; "
                                  f"$HOME, /tmp and host paths hidden; scratch tmpfs "
                                  f"{SCRATCH_BYTES >> 20} MiB / {SCRATCH_INODES} files as cwd)")
    else:
        for name in ("user namespace", "pid namespace", "network namespace", "ipc, uts namespaces",
                     "mount namespace"):
            out[name] = "off (not in this tier)"
        out["scratch"] = (f"host directory under {facts.get('scratch_base')}, watched: "
                          f"{SCRATCH_BYTES >> 20} MiB / {SCRATCH_INODES} files")
    if abi:
        parts = ["filesystem allow-list"]
        if abi >= 4:
            parts.append("TCP denied")
        if abi >= 6:
            parts.append("signals and abstract sockets scoped")
        out["landlock"] = f"on (ABI {abi}: {', '.join(parts)})"
    else:
        out["landlock"] = "off (" + ("not used" if tier == Tier.NONE else "kernel has no Landlock") + ")"
    if facts.get("seccomp"):
        if tier == Tier.NAMESPACES:
            rest = ("UNIX sockets only, threads only and no exec unless a lesson declares "
                    "processes, exec or loopback")
        else:
            rest = "no sockets, threads only, no exec (lessons that declare more are refused)"
        out["seccomp"] = f"on ({facts.get('seccomp_backend', 'BPF')}: deny list, {rest})"
    else:
        out["seccomp"] = "off (" + ("not used" if tier == Tier.NONE else "unsupported architecture") + ")"
    if tier == Tier.NONE:
        out["rlimits"] = "on (address space, CPU, file size, open files)"
    else:
        if tier == Tier.NAMESPACES:
            nproc = f", {PROCESSES} processes and threads"
        else:
            nproc = (f", {PROCESSES} processes and threads per run: RLIMIT_NPROC counts the whole uid "
                     f"here, so it is set to what uid {uid} already runs plus that")
        out["rlimits"] = (f"on (address space {ADDRESS_SPACE >> 30} GiB, CPU, file size "
                          f"{FILE_SIZE >> 20} MiB, {OPEN_FILES} open files{nproc})")
    if tier in (Tier.NAMESPACES, Tier.LANDLOCK):
        note = facts.get("cgroup_note", "")
        if facts.get("cgroup"):
            out["memory cap"] = (f"on (cgroup v2 per run: memory {CGROUP_RUN_MEMORY >> 30} GiB without "
                                 f"swap, tasks; via {note})")
        else:
            if tier == Tier.LANDLOCK:
                also = "; memfds, SysV and POSIX shared memory are refused, so a run holds little beyond that"
            else:
                also = ("; memfds and SysV shared memory are refused, but a run granted processes or exec may "
                        f"hold memfds, uncapped, and /dev/shm up to {SCRATCH_BYTES >> 20} MiB beside that")
            out["memory cap"] = (f"off (no cgroup can be had: {note}); only RLIMIT_AS "
                                 f"{ADDRESS_SPACE >> 30} GiB per process, which is not a total{also}")
    who = f"uid {uid} (the tutor runs as root)" if root else f"your own uid {uid}"
    out["uid"] = f"snippets run as {who}"
    if tier == Tier.NONE:
        out["capabilities"] = "none"
    elif tier == Tier.NAMESPACES or root:
        out["capabilities"] = "none (bounding set emptied, no_new_privs)"
    else:
        # Emptying the bounding set needs CAP_SETPCAP, which a process without namespaces and without
        # root never has: say what is true instead of what was attempted.
        out["capabilities"] = ("none effective or permitted; the bounding set stays full (emptying it needs "
                               "CAP_SETPCAP, which a non-root tutor lacks), and no_new_privs keeps setuid "
                               "programs and file capabilities from granting any")
    out["session"] = "setsid, parent-death signal, wall-clock kill of the whole process tree"
    cache = facts.get("compile_cache")
    if cache:
        out["compile cache"] = (f"{cache}: torch.compile's kernels for this course, kept between runs; read-write "
                                f"only for the learner's side of a run granted exec, at most {CACHE_BUDGET >> 20} MiB")
    extra = facts.get("extra_ro") or []
    if extra:
        out["course code"] = "read-only: " + ", ".join(str(p) for p in extra)
    return out


def _tier(text) -> Tier | None:
    try:
        return Tier(str(text))
    except ValueError:
        return None
