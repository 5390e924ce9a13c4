"""Helpers for the sandbox tests (imported by the tests and by ``conftest.py``)."""

from __future__ import annotations

import os
import secrets
import socket
from pathlib import Path

import pytest

from tutor.sandbox.client import Sandbox, run_sync
from tutor.sandbox.wire import RunRequest

# In the test ("app") process's environment before any zygote starts; no snippet may ever see it.
SECRET = "pytorch-tutor-secret-" + secrets.token_hex(8)
os.environ["PYTORCH_TUTOR_TEST_SECRET"] = SECRET


def needs_tier1(box: Sandbox) -> None:
    if box.tier_level != "1":
        pytest.skip(f"needs tier 1 (namespaces); this is {box.tier}")


def run(box: Sandbox, code: str, setup: str = "", timeout: float = 5.0, needs=(), asks=()):
    return run_sync(RunRequest(code=code, setup=setup, timeout=timeout, needs=tuple(needs), asks=tuple(asks)), box)


def var(result, name: str):
    """A variable's plain value (for str/int/bool/float and lists of them)."""
    described = result.observation.variables.get(name) if result.observation else None
    return _plain(described)


def _plain(described):
    if not isinstance(described, dict):
        return None
    if described.get("type") in ("list", "tuple"):
        return [_plain(i) for i in described.get("items", [])]
    return described.get("value")


def error_type(result) -> str | None:
    obs = result.observation
    return obs.error.type if obs is not None and obs.error is not None else None


def everything_said(result) -> str:
    """All text the run produced, for "the secret never appears" assertions."""
    obs = result.observation
    parts = [result.output, result.message]
    if obs is not None:
        parts += [repr(obs.variables), repr(obs.asks), repr(obs.error), obs.check_message]
    return "\n".join(parts)


def processes_with(marker: str, wait: float = 3.0) -> list[int]:
    """Live host pids whose name or command line contains ``marker``, after up to ``wait`` s for them to go.

    Zombies (killed, about to be reaped) do not count: they run nothing and hold no memory.
    """
    import time

    deadline = time.monotonic() + wait
    while True:
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
                with open(f"/proc/{entry}/comm", "rb") as f:
                    comm = f.read()
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmdline = f.read()
            except (OSError, IndexError):
                continue
            if state not in (b"Z", b"X") and (marker.encode() in comm or marker.encode() in cmdline):
                found.append(int(entry))
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


class HostListeners:
    """Servers on the host side that a snippet must not reach."""

    def __init__(self, directory: Path):
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.tcp.setblocking(False)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.setblocking(False)
        self.unix_path = str(directory / "host.sock")
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        os.chmod(self.unix_path, 0o777)
        self.unix.listen(8)
        self.unix.setblocking(False)
        self.abstract_name = "\0pytorch-tutor-test-" + secrets.token_hex(6)
        self.abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.abstract.bind(self.abstract_name)
        self.abstract.listen(8)
        self.abstract.setblocking(False)

    @property
    def tcp_port(self) -> int:
        return self.tcp.getsockname()[1]

    @property
    def udp_port(self) -> int:
        return self.udp.getsockname()[1]

    def nothing_arrived(self) -> bool:
        for server in (self.tcp, self.unix, self.abstract):
            try:
                server.accept()[0].close()
                return False
            except BlockingIOError:
                pass
        try:
            self.udp.recv(100)
            return False
        except BlockingIOError:
            return True

    def close(self) -> None:
        for s in (self.tcp, self.udp, self.unix, self.abstract):
            s.close()
