"""Sandboxes shared by the sandbox tests, and the checks every abuse case ends with.

Long-lived sandboxes serve the whole session (a warm zygote makes each case cheap):

* ``tier1``: the tier the probe picks on this machine;
* ``tier2``: this process's user (root here) with an interpreter that runs under a
  seccomp filter refusing every namespace, so the probe itself falls back to tier 2;
* ``tier2-real``: the real tier 2, a fresh unprivileged uid (no passwd entry) on a host
  that forbids namespaces, with a desktop's open-files limit (``as_uid.py``): what an
  Ubuntu learner gets. As a non-root user this is just the forbidding interpreter;
* ``tier1-real`` (only where a test asks for it): the same fresh unprivileged uid on a host that
  *allows* unprivileged user namespaces, as an ordinary Linux desktop does: tier 1 as a learner gets it;
* ``tier2-abi5`` (only where a test asks for it): the real tier 2 pretending its kernel's
  Landlock is ABI 5, which cannot scope signals (Linux < 6.12).

Every case that uses the ``sb`` fixture ends with a health check: the same
zygote still answers, a trivial run still works, and nothing is left in flight.
"""

from __future__ import annotations

import os
import secrets
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tutor.sandbox.client import Sandbox, probe, run_sync
from tutor.sandbox.wire import AskSpec, RunRequest

from sandbox_helpers import SECRET, HostListeners  # sets the secret before any zygote starts

HERE = Path(__file__).resolve().parent
FORBID = HERE / "forbid_namespaces.py"
AS_UID = HERE / "as_uid.py"
SANDBOXES = {"tier1": "tier1_sandbox", "tier2": "tier2_sandbox", "tier2-real": "real_tier2_sandbox",
             "tier1-real": "real_tier1_sandbox", "tier2-abi5": "abi5_tier2_sandbox"}


def _fresh_uid() -> int:
    """A uid (and the same gid) that no process, passwd or group entry uses."""
    import grp
    import pwd

    used = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                used.add(os.stat(f"/proc/{entry}").st_uid)
            except OSError:
                pass
    for uid in range(54321, 54421):
        if uid in used:
            continue
        try:
            pwd.getpwuid(uid)
            continue
        except KeyError:
            pass
        try:
            grp.getgrgid(uid)
            continue
        except KeyError:
            return uid
    pytest.skip("no free uid in 54321-54420 for the real tier-2 tests")


def uid_python(directory: Path, name: str, uid: int | None, forbid: bool = True, nofile: int | None = None,
               env: dict | None = None) -> str:
    """A wrapper that runs this interpreter as ``uid`` (when we are root) on a host forbidding namespaces."""
    import shlex

    opts = []
    if uid is not None and os.geteuid() == 0:
        opts += ["--uid", str(uid), "--gid", str(uid)]
        for path in {os.path.dirname(os.path.realpath(sys.executable)), os.path.realpath(sys.base_prefix),
                     os.path.realpath(sys.prefix)}:
            opts += ["--expose", path]
    if nofile:
        opts += ["--nofile", str(nofile)]
    if not forbid:
        opts.append("--no-forbid")
    lines = ["#!/bin/sh"] + [f"export {k}={shlex.quote(v)}" for k, v in (env or {}).items()]
    lines.append(f"exec {shlex.quote(sys.executable)} -I -S {shlex.quote(str(AS_UID))} "
                 f"{' '.join(shlex.quote(o) for o in opts)} -- {shlex.quote(sys.executable)} \"$@\"")
    wrapper = directory / name
    wrapper.write_text("\n".join(lines) + "\n")
    wrapper.chmod(0o755)
    return str(wrapper)


@pytest.fixture(scope="session")
def real_tier2_uid() -> int:
    return _fresh_uid() if os.geteuid() == 0 else os.geteuid()


@pytest.fixture(scope="session")
def real_tier2_python(tmp_path_factory, real_tier2_uid) -> str:
    """An interpreter for the real tier 2: a fresh non-root uid, namespaces refused, 1024 open files."""
    if os.geteuid() == 0 and not hasattr(os, "setresuid"):
        pytest.skip("cannot change uid here")
    directory = tmp_path_factory.mktemp("real-tier2")
    os.chmod(directory, 0o755)
    return uid_python(directory, "python-real-tier2", real_tier2_uid, nofile=1024)


@pytest.fixture(scope="session")
def real_tier1_python(tmp_path_factory, real_tier2_uid) -> str:
    """An interpreter for the real tier 1: the same fresh non-root uid, namespaces allowed, 1024 open files.

    Skips only where this kernel refuses that uid a user namespace outright (checked here, with the
    bare system call, so that a sandbox failing to use an allowed namespace cannot hide behind the skip).
    """
    if os.geteuid() == 0 and not hasattr(os, "setresuid"):
        pytest.skip("cannot change uid here")
    directory = tmp_path_factory.mktemp("real-tier1")
    os.chmod(directory, 0o755)
    python = uid_python(directory, "python-real-tier1", real_tier2_uid, forbid=False, nofile=1024)
    allowed = subprocess.run([python, "-I", "-c", "import ctypes, sys\n"
                              "sys.exit(ctypes.CDLL(None).unshare(0x10000000) != 0)"])  # CLONE_NEWUSER
    if allowed.returncode != 0:
        pytest.skip("this kernel refuses unprivileged user namespaces: a non-root learner gets tier 2 here")
    return python


@pytest.fixture(scope="session")
def victim_python(tmp_path_factory):
    """``victim_python(uid)``: an interpreter running as ``uid``, for processes the sandbox must not reach."""
    directory = tmp_path_factory.mktemp("victims")
    os.chmod(directory, 0o755)
    made: dict[int, str] = {}

    def get(uid: int) -> str:
        if os.geteuid() != 0:
            assert uid == os.geteuid(), "a non-root test run can only make victims of its own uid"
            return sys.executable
        if uid not in made:
            made[uid] = uid_python(directory, f"python-as-{uid}", uid, forbid=False)
        return made[uid]

    return get


def _tier2_box(python: str, what: str):
    box = Sandbox(python=python)
    tier = box.choose_tier()
    report = probe(python)
    if tier != "2":
        if not (report.get("landlock_abi") and report.get("seccomp_arch")):
            pytest.skip(f"{what} needs Landlock and seccomp, which this kernel lacks (tier {tier})")
        pytest.fail(f"{what}: the probe chose tier {tier}, not 2: {report}")
    box.start_sync()
    return box


@pytest.fixture(scope="session")
def forbidding_python(tmp_path_factory) -> str:
    """An interpreter whose every process is refused user, pid, net, ipc, uts and mount namespaces."""
    wrapper = tmp_path_factory.mktemp("forbid") / "python-without-namespaces"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -I {FORBID} {sys.executable} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper)


@pytest.fixture(scope="session")
def tier1_sandbox():
    box = Sandbox()
    tier = box.choose_tier()
    if tier != "1":
        reason = probe().get("namespaces", {}).get("error", "")
        pytest.skip(f"needs tier 1: this machine refuses namespaces (probe chose tier {tier}: {reason})")
    box.start_sync()
    yield box
    box.close_sync()


@pytest.fixture(scope="session")
def tier2_sandbox(forbidding_python):
    box = Sandbox(python=forbidding_python)
    tier = box.choose_tier()
    if tier != "2":
        pytest.skip(f"tier 2 needs Landlock and seccomp; with namespaces forbidden the probe chose tier {tier}")
    box.start_sync()
    yield box
    box.close_sync()


@pytest.fixture(scope="session")
def real_tier2_sandbox(real_tier2_python):
    box = _tier2_box(real_tier2_python, "the real tier 2 (a non-root uid, namespaces refused)")
    assert box.info["uid"] != 0 and not box.info["root"]
    yield box
    box.close_sync()


@pytest.fixture(scope="session")
def real_tier1_sandbox(real_tier1_python):
    box = Sandbox(python=real_tier1_python)
    tier = box.choose_tier()
    assert tier == "1", f"a non-root uid with namespaces allowed got tier {tier}: {probe(real_tier1_python)}"
    box.start_sync()
    assert box.info["uid"] != 0 and not box.info["root"]
    yield box
    box.close_sync()


@pytest.fixture(scope="session")
def abi5_tier2_sandbox(tmp_path_factory, real_tier2_uid):
    directory = tmp_path_factory.mktemp("abi5")
    os.chmod(directory, 0o755)
    python = uid_python(directory, "python-real-tier2-abi5", real_tier2_uid, nofile=1024,
                        env={"PYTORCH_TUTOR_LANDLOCK_ABI_CAP": "5"})
    box = _tier2_box(python, "tier 2 with Landlock ABI 5")
    assert box.info["landlock_abi"] == 5
    yield box
    box.close_sync()


@pytest.fixture(params=["tier1", "tier2", "tier2-real"])
def sb(request):
    box = request.getfixturevalue(SANDBOXES[request.param])
    zygote = box.info.get("pid")
    yield box
    # the zygote and the "app" (this process) are healthy afterwards
    after = run_sync(RunRequest(code="import torch\nx = torch.ones(2) + 1", asks=(AskSpec("x", "x.tolist()"),)), box)
    assert after.ok, after.message
    assert after.observation.asks["x"].value["items"][0]["value"] == 2.0
    assert box.info.get("pid") == zygote, "the zygote was restarted"
    assert not box.live


@pytest.fixture
def listeners(tmp_path):
    directory = tmp_path / "srv"
    directory.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(directory, 0o777)
    host = HostListeners(directory)
    yield host
    host.close()


@pytest.fixture
def planted_secret(tmp_path):
    """A secret file in the real $HOME (falling back to a temporary home if $HOME is not writable)."""
    home = Path.home()
    name = f".pytorch-tutor-planted-{secrets.token_hex(6)}"
    path = home / name
    try:
        path.write_text(SECRET + "\n")
        os.chmod(path, 0o644)  # readable by anyone on the host: only the sandbox stands in the way
    except OSError:
        path = tmp_path / name
        path.write_text(SECRET + "\n")
        os.chmod(path, 0o644)
        os.chmod(tmp_path, 0o755)
    yield path
    path.unlink(missing_ok=True)
