"""The start-up probe: which isolation tier does this machine give the sandbox?

Run as its own small program (``python -I -S``, ``tutor.sandbox.inner.probe`` as ``-m`` would,
standard library only, no torch) so that the UI process never forks. It performs a real dry run of
each tier with the same code the zygote uses (``tree.spawn``) and a trivial
body that reports what it sees from inside, then prints one JSON object:

* tier 1 when a run with new user, pid, network, ipc, uts and mount namespaces,
  a private root, a fresh ``/proc`` and the scratch tmpfs works;
* otherwise tier 2 when Landlock and seccomp both work (no namespaces);
* otherwise tier 3 (rlimits and a separate session only): built-in lessons only.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time

from tutor.sandbox.inner import kernel, landlock, mounts, scratch, seccomp
from tutor.sandbox.inner import tree
from tutor.sandbox.wire import Tier


def _inside() -> None:
    """The dry run's body: describe the confinement from the inside, then leave."""
    info: dict = {"pid": os.getpid(), "uid": os.getuid(), "gid": os.getgid()}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("CapEff", "CapBnd", "Seccomp", "NoNewPrivs"):
                    info[key] = value.strip()
    except OSError as exc:
        info["status_error"] = str(exc)
    try:
        info["root_entries"] = sorted(os.listdir("/"))
    except OSError as exc:
        info["root_entries"] = f"denied ({type(exc).__name__})"
    try:
        with open("probe-write", "w") as f:
            f.write("ok")
        info["scratch_writable"] = True
    except OSError:
        info["scratch_writable"] = False
    try:
        with open("/proc/net/dev") as f:
            info["interfaces"] = sorted(line.split(":")[0].strip() for line in f.readlines()[2:])
    except OSError as exc:
        info["interfaces"] = f"denied ({type(exc).__name__})"
    raw = json.dumps(info).encode()
    os.pwrite(tree.RESULT_FD, raw, 0)
    os._exit(0)


def attempt(tier: Tier, landlock_abi: int, has_seccomp: bool, timeout: float = 10.0) -> dict:
    """Run the body once in ``tier``; return what it saw, or the error that stopped it."""
    root = os.geteuid() == 0
    uid = kernel.NOBODY if root else os.getuid()
    gid = kernel.NOBODY if root else os.getgid()
    plan = mounts.build_plan() if tier == Tier.NAMESPACES else None
    scratch_base = ""
    run_scratch = "/tmp"
    if tier != Tier.NAMESPACES:
        scratch_base = tempfile.mkdtemp(prefix="pytorch-tutor-probe-")
        os.chmod(scratch_base, 0o711)
        run_scratch = os.path.join(scratch_base, "run")
        os.mkdir(run_scratch, 0o700)
        if root:
            os.chown(run_scratch, uid, gid)
    setup = tree.Setup(tier=tier, uid=uid, gid=gid, root=root, landlock_abi=landlock_abi, seccomp=has_seccomp,
                       plan=plan, base="/tmp" if os.path.isdir("/tmp") else "/mnt")
    program = None
    if has_seccomp and tier == Tier.NAMESPACES:  # tier 2's filter names the runner's own pid: tree builds it there
        program = seccomp.build_filter(sockets="unix")
    devnull = os.open(os.devnull, os.O_RDWR)
    out = os.memfd_create("output", os.MFD_CLOEXEC)
    res = os.memfd_create("result", os.MFD_CLOEXEC)
    status_r, status_w = os.pipe2(os.O_CLOEXEC)
    spec = tree.RunSpec(devnull=devnull, output=out, result=res, status=status_w, scratch=run_scratch, timeout=timeout,
                        seccomp_filter=program, zygote_pid=os.getpid())
    started = time.monotonic()
    try:
        pid = tree.spawn(setup, spec, _inside)
        os.close(status_w)
        status = None
        while time.monotonic() - started < timeout:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.002)
        else:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"ok": False, "error": f"the dry run did not finish in {timeout:g} s"}
        os.set_blocking(status_r, False)
        kind, value = tree.read_status(status_r)
        size = os.fstat(res).st_size
        raw = os.pread(res, min(size, 65536), 0)
        if kind == "error":
            return {"ok": False, "error": value}
        try:
            seen = json.loads(raw) if raw else None
        except ValueError:
            seen = None
        if not isinstance(seen, dict):
            return {"ok": False, "error": f"the dry run ended without a report (status {status})"}
        return {"ok": True, "seen": seen, "ms": round((time.monotonic() - started) * 1000, 1)}
    except OSError as exc:
        return {"ok": False, "error": str(exc)}
    finally:
        for fd in (devnull, out, res, status_r):
            try:
                os.close(fd)
            except OSError:
                pass
        if scratch_base:
            scratch.remove_tree(scratch_base)


def probe() -> dict:
    abi = landlock.landlock_abi()
    has_seccomp = seccomp.seccomp_supported()
    report: dict = {"euid": os.geteuid(), "landlock_abi": abi, "seccomp_arch": has_seccomp,
                    "sandbox_uid": kernel.NOBODY if os.geteuid() == 0 else os.getuid()}
    one = attempt(Tier.NAMESPACES, abi, has_seccomp)
    report["namespaces"] = one
    namespaces_ok = one["ok"] and one["seen"].get("pid") == 2
    if namespaces_ok:
        report["tier"] = Tier.NAMESPACES
        return report
    if abi and has_seccomp:
        two = attempt(Tier.LANDLOCK, abi, has_seccomp)
        report["tier2"] = two
        if two["ok"] and two["seen"].get("Seccomp") == "2" and two["seen"].get("scratch_writable"):
            report["tier"] = Tier.LANDLOCK
            return report
    report["tier"] = Tier.WEAK
    return report


def main() -> int:
    print(json.dumps(probe()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
