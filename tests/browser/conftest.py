"""A real ``pytorch-tutor serve-ui`` and a real headless Chromium for browser tests."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser.cdp import Chromium, find_chromium
from tests.process_output import FollowsOutput

ARTIFACTS = Path(os.environ.get("TUTOR_TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))
SERVING = re.compile(r"Serving pytorch-tutor on (http://\S+/)\?token=(\S+)")


class ServeUI(FollowsOutput):
    """``pytorch-tutor serve-ui --port 0`` in its own process group, under umask 022 (a common
    default, the one that left profiles readable by others). ``url`` is the address it printed,
    token included; ``base`` the same without it; every line it prints is kept in ``output``."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, serve_args: tuple[str, ...] = ("--port", "0"),
                 wait_for: re.Pattern[str] | None = SERVING) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tutor", *args, "serve-ui", *serve_args], stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True,
            umask=0o022)
        self.follow_output("serve-ui")
        self.url = self.base = self.token = ""
        if wait_for is SERVING:
            match = self.wait_for_line(SERVING.pattern)
            self.base, self.token = match.group(1), match.group(2)
            self.url = f"{self.base}?token={self.token}"
        elif wait_for is not None:
            self.wait_for_line(wait_for.pattern)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # the server tells each app process to quit
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@pytest.fixture
def serve_ui(tmp_path):
    servers: list[ServeUI] = []

    def start(*args: str, env: dict[str, str] | None = None, **kwargs) -> ServeUI:
        env = {**os.environ, "PYTORCH_TUTOR_HOME": str(tmp_path / "home"), **(env or {})}
        server = ServeUI(*args, env=env, **kwargs)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def chromium():
    executable = find_chromium()
    if executable is None:
        pytest.skip("no Chromium here: install the Debian package `chromium` (.ci/run does so when it runs as "
                    "root with apt-get)")
    browser = Chromium(executable)
    try:
        yield browser
    finally:
        browser.close()
