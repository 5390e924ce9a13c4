"""A real ``pytorch-tutor serve-ui`` and a real headless Chromium for browser tests."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.browser.cdp import Chromium, find_chromium

ARTIFACTS = Path(os.environ.get("TUTOR_TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))
SERVING = re.compile(r"Serving pytorch-tutor on (http://\S+/)")


class ServeUI:
    """``pytorch-tutor serve-ui --port 0`` in its own process group; ``url`` once it listens."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tutor", *args, "serve-ui", "--port", "0"], stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)
        self.output: list[str] = []
        self.url = self._wait_for_url()

    def _wait_for_url(self, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        assert self.process.stdout is not None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.output.append(line)
            match = SERVING.search(line)
            if match:
                return match.group(1)
        raise RuntimeError("serve-ui did not start:\n" + "".join(self.output))

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

    def start(*args: str) -> ServeUI:
        server = ServeUI(*args, env={**os.environ, "PYTORCH_TUTOR_HOME": str(tmp_path / "home")})
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
