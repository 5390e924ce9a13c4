"""Sandboxes shared by the sandbox tests, and the checks every abuse case ends with.

Two long-lived sandboxes serve the whole session (a warm zygote makes each case
cheap): the tier the probe picks on this machine, and a tier-2 sandbox whose
interpreter runs under a seccomp filter that refuses every namespace, so the
probe itself falls back to tier 2 exactly as on a host that forbids them.

Every case that uses the ``sb`` fixture ends with a health check: the same
zygote still answers, a trivial run still works, and nothing is left in flight.
"""

from __future__ import annotations

import os
import secrets
import stat
import sys
from pathlib import Path

import pytest

from tutor.sandbox.client import Sandbox, probe, run_sync
from tutor.sandbox.protocol import AskSpec, RunRequest

from sandbox_helpers import SECRET, HostListeners  # sets the secret before any zygote starts

HERE = Path(__file__).resolve().parent
FORBID = HERE / "forbid_namespaces.py"


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


@pytest.fixture(params=["tier1", "tier2"])
def sb(request):
    box = request.getfixturevalue(f"{request.param}_sandbox")
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
