"""A real JupyterHub serving the tutor to two learners (issue 34, item 4).

The hub runs the shipped ``deploy/jupyterhub/jupyterhub_config.py`` (loaded as it is: the absolute
``jupyterhub-singleuser``, ``default_url = "/tutor/"``, the idle culler as a hub service) with only
what a machine without root and system accounts must change: SharedPasswordAuthenticator (one class
password: the guide's "join code" option) and SimpleLocalProcessSpawner (every learner's server as
this account, each with a home of their own). Each learner's Jupyter server reads the guide's
"Another course" ``jupyter_server_config.py`` (the tiny test course instead of the built-in one).

Two learners log in at once, each spawns a server, opens ``/user/NAME/tutor/`` through the hub's
proxy and receives the module map over the tutor's websocket; one answers a drill; the other's
profile is untouched. Then the guide's class-report command reads both homes.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from tests.process_output import FollowsOutput
from tutor.classroom.sources import read_attempts

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SHIPPED_CONFIG = REPO / "deploy" / "jupyterhub" / "jupyterhub_config.py"
MINI_COURSE = REPO / "tests" / "fixtures" / "mini_course"
PASSWORD = "a-class-join-code"
ADMIN_PASSWORD = "the-instructors-own-password-of-32+-characters"  # SharedPasswordAuthenticator wants 32
# Terminal control sequences between the characters Textual draws (colours, cursor moves).
CONTROL = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[\]P^_][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def _missing() -> str:
    """Why this machine cannot run a hub ("" when it can)."""
    try:
        import jupyter_server_proxy  # noqa: F401
        import jupyterhub  # noqa: F401
        import jupyterhub_idle_culler  # noqa: F401
    except ImportError as e:
        return f"{e.name} is not installed (pip install -e '.[test]' brings it)"
    if not proxy_command():
        return ("Node's configurable-http-proxy is not installed (npm install -g configurable-http-proxy, or "
                "--prefix .venv/node as .ci/run does)")
    return ""


def proxy_command() -> str | None:
    """configurable-http-proxy: on PATH, or where .ci/run puts it (``npm install --prefix .venv/node``)."""
    import shutil

    local = Path(sys.prefix) / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
    return shutil.which("configurable-http-proxy") or (str(local) if local.exists() else None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Hub(FollowsOutput):
    """``jupyterhub -f CONFIG`` in its own process group; every line it logs is kept."""

    wait_timeout = 120.0  # the hub, its proxy and a learner's server starting on a loaded machine

    def __init__(self, config: Path, cwd: Path, hub_api: str) -> None:
        self.hub_api = hub_api  # "127.0.0.1:PORT": in every process this hub started (see stop())
        bin_dir = str(Path(sys.executable).parent)  # jupyterhub-singleuser and the tutor's own console script
        env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
        env.pop("PYTORCH_TUTOR_HOME", None)  # the learners' tutors must find their own homes, as on a hub
        self.process = subprocess.Popen(
            [str(Path(sys.executable).parent / "jupyterhub"), "-f", str(config)], cwd=cwd, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)
        self.follow_output("the hub")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # the hub stops its proxy, its services and the servers
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        # A hub that died on its own (a service that failed to start) left them running, each in a session
        # of its own: find them by the hub's API address, which each holds in its command line or environment
        ending = []
        for pid in self.leftovers():
            try:
                fd = os.pidfd_open(pid)
            except ProcessLookupError:
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            ending.append(fd)
        for fd in ending:  # a pidfd turns readable when its process has ended: wait for that, not a time
            select.select([fd], [], [], 30)
            os.close(fd)

    def leftovers(self) -> list[int]:
        mark, found = self.hub_api.encode(), []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f, open(f"/proc/{entry}/environ", "rb") as g:
                    if mark in f.read() or mark in g.read():
                        found.append(int(entry))
            except OSError:  # gone, or another user's
                continue
        return found


def write_config(folder: Path, learners: tuple[str, ...] | list[str] = ("ana", "ben")) -> tuple[Path, str, str]:
    """The shipped config, and on top of it only what this machine needs; returns (path, the hub's address,
    its API's host:port).
    (``benchmarks/bench_hub.py`` starts its hubs here too, with more learners.)"""
    homes, server_config = folder / "homes", folder / "learner-jupyter-config"
    server_config.mkdir()
    # the guide's "Another course": a learner's Jupyter server serves another course through setup_tutor()
    (server_config / "jupyter_server_config.py").write_text(
        "from tutor.web.jupyter import setup_tutor\n\n"
        "tutor = setup_tutor()  # the Unix socket, the token in the environment and in the proxy's header\n"
        f"tutor['command'] = ['pytorch-tutor', '--lessons', {str(MINI_COURSE)!r}, '--trust-lessons', 'serve-ui',\n"
        "                    '--unix-socket', '{unix_socket}']\n"
        "c.ServerProxy.servers = {'tutor': tutor}\n")
    port, hub_port = free_port(), free_port()
    settings = {
        "JupyterHub.authenticator_class": "jupyterhub.authenticators.shared.SharedPasswordAuthenticator",
        "SharedPasswordAuthenticator.user_password": PASSWORD,
        "SharedPasswordAuthenticator.admin_password": ADMIN_PASSWORD,
        "Authenticator.allowed_users": {*learners, "teacher"},
        "Authenticator.admin_users": {"teacher"},
        "JupyterHub.spawner_class": "jupyterhub.spawner.SimpleLocalProcessSpawner",
        "SimpleLocalProcessSpawner.home_dir_template": str(homes / "{username}"),
        "Spawner.environment": {"JUPYTER_CONFIG_DIR": str(server_config)},
        "Spawner.http_timeout": 120,
        "Spawner.start_timeout": 120,
        "JupyterHub.bind_url": f"http://127.0.0.1:{port}",
        "JupyterHub.hub_port": hub_port,
        "ConfigurableHTTPProxy.api_url": f"http://127.0.0.1:{free_port()}",
        "ConfigurableHTTPProxy.command": [proxy_command()],
        "JupyterHub.db_url": f"sqlite:///{folder / 'hub.sqlite'}",
        "JupyterHub.cookie_secret_file": str(folder / "cookie_secret"),
        "JupyterHub.pid_file": str(folder / "hub.pid"),
    }
    if os.geteuid() == 0:  # a developer's root shell (CI runs this as a learner): Jupyter refuses root without it
        settings["Spawner.args"] = ["--allow-root"]
    lines = [f"load_subconfig({str(SHIPPED_CONFIG)!r})"]
    lines += [f"c.{key} = {value!r}" for key, value in settings.items()]
    # the instructor's page reads these homes (not /home) for this course, on a port free here
    view = [sys.executable, "-m", "tutor", "--lessons", str(MINI_COURSE), "class", "hub-service",
            str(homes / "*" / ".local" / "share" / "pytorch-tutor" / "profiles" / "default.sqlite")]
    lines += ["for service in c.JupyterHub.services:",
              "    if service['name'] == 'class-now':",
              f"        service.update(url='http://127.0.0.1:{free_port()}', command={view!r})"]
    config = folder / "hub_config.py"
    config.write_text("\n".join(lines) + "\n")
    return config, f"http://127.0.0.1:{port}", f"127.0.0.1:{hub_port}"


class Learner:
    """One browser: its own cookies, logged in to the hub, then on its own tutor's websocket."""

    def __init__(self, base: str, name: str, password: str = PASSWORD) -> None:
        self.base, self.name, self.password = base, name, password
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.seen = bytearray()

    async def log_in(self) -> None:
        async with self.http.get(f"{self.base}/hub/login") as page:
            xsrf = re.search(r'name="_xsrf" value="([^"]+)"', await page.text()).group(1)
        form = {"username": self.name, "password": self.password, "_xsrf": xsrf}
        async with self.http.post(f"{self.base}/hub/login", data=form, allow_redirects=False) as answer:
            assert answer.status == 302, f"{self.name} was not let in: {answer.status}"

    async def log_in_and_open_the_tutor(self) -> str:
        await self.log_in()
        async with self.http.get(f"{self.base}/hub/spawn") as page:  # what the browser goes to after login
            text = await page.text()
        progress = re.search(r'EventSource\("([^"]+)"\)', text)
        if progress:  # the spawn-pending page: the hub's own event stream says when the server is ready
            async with self.http.get(self.base + progress.group(1)) as events:
                async for raw in events.content:
                    line = raw.decode().strip()
                    if line.startswith("data:"):
                        event = json.loads(line[5:])
                        assert not event.get("failed"), f"{self.name}'s server failed: {event.get('message')}"
                        if event.get("ready"):
                            break
        async with self.http.get(f"{self.base}/user/{self.name}/tutor/") as page:
            assert page.status == 200, f"{self.name}: /user/{self.name}/tutor/ answered {page.status}"
            text = await page.text()
        self.ws = await self.http.ws_connect(f"{self.base}/user/{self.name}/tutor/ws?width=100&height=30",
                                             headers={"Origin": self.base})
        return text

    async def screen_shows(self, wanted: bytes, timeout: float = 120.0) -> bytes:
        """What the tutor drew from now on, its control sequences left out, once ``wanted`` is in it."""
        assert self.ws is not None
        start, deadline = len(self.seen), time.monotonic() + timeout
        while wanted not in (drawn := CONTROL.sub(b"", bytes(self.seen[start:]))):
            message = await self.ws.receive(timeout=max(0.1, deadline - time.monotonic()))
            assert message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), \
                f"{self.name}'s websocket ended: {message}"
            if message.type == aiohttp.WSMsgType.BINARY:
                self.seen += message.data
        return drawn

    async def keys(self, text: str) -> None:
        assert self.ws is not None
        await self.ws.send_str(json.dumps(["stdin", text]))

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        await self.http.close()


def profile(folder: Path, name: str) -> Path:
    return folder / "homes" / name / ".local" / "share" / "pytorch-tutor" / "profiles" / "default.sqlite"


@pytest.fixture
def hub(tmp_path):
    if why := _missing():
        pytest.skip(f"no JupyterHub here: {why}")
    config, base, hub_api = write_config(tmp_path)
    server = Hub(config, tmp_path, hub_api)
    try:
        server.wait_for_line(r"JupyterHub is now running at")
        yield server, base
    finally:
        server.stop()
        assert server.leftovers() == [], "the hub left processes running"


async def test_two_learners_each_get_their_own_tutor_through_a_real_hub(hub, tmp_path):
    server, base = hub
    # the shipped idle culler runs as a hub service, with the hub's own interpreter, and is let in
    server.wait_for_line(r"200 GET /hub/api/users.*\(idle-culler@")
    ana, ben, teacher = Learner(base, "ana"), Learner(base, "ben"), Learner(base, "teacher", ADMIN_PASSWORD)
    try:
        pages = await asyncio.gather(ana.log_in_and_open_the_tutor(), ben.log_in_and_open_the_tutor())
        assert all("textual.js" in page for page in pages)  # the tutor's page, through hub, proxy and socket
        await asyncio.gather(ana.screen_shows(b"First steps"), ben.screen_shows(b"First steps"))  # the map

        # ben's browser at ana's tutor: the hub's login stands before her server
        async with ben.http.get(f"{base}/user/ana/tutor/") as page:
            assert page.status == 403 and "textual.js" not in await page.text()
        with pytest.raises(aiohttp.WSServerHandshakeError):
            await ben.http.ws_connect(f"{base}/user/ana/tutor/ws", headers={"Origin": base})

        # ana answers the first drill, one step at a time as a learner does (keys sent while the
        # app moves focus would be lost: each waits for what the last one drew)
        await ana.keys("\r")
        await ana.screen_shows(b"y.stride()")
        await ana.keys("(1,3)")
        await ana.screen_shows(b"(1,3)")
        await ana.keys("\r")
        await ana.screen_shows(b"Verified")

        # the instructor's live page, behind the hub's login: ana at her drill, ben not started;
        # a learner who knows its address gets the hub's 403
        await teacher.log_in()
        async with teacher.http.get(f"{base}/services/class-now/") as page:
            text = await page.text()
            assert page.status == 200 and "<td>ana</td>" in text and "<td>ben</td>" in text, text
            assert "<td>ana</td><td>01 What a transpose does to strides</td>" in text, text
            assert "solved it" in text and "not started" in text, text
        async with ana.http.get(f"{base}/services/class-now/") as page:
            assert page.status == 403 and "<td>ben</td>" not in await page.text()
    finally:
        for browser in (ana, ben, teacher):
            await browser.close()
    server.wait_for_line(r"tab closed", times=2)  # each tutor saved what it held as its tab went

    # every learner's profile in their own home, kept private, written only by their own tutor
    ana_file, ben_file = profile(tmp_path, "ana"), profile(tmp_path, "ben")
    assert oct(ana_file.stat().st_mode & 0o777) == "0o600"
    ana_attempts, ben_attempts = read_attempts(ana_file), read_attempts(ben_file)
    assert [(a.item, a.correct) for a in ana_attempts if a.kind == "prediction"] == [("transpose-strides", True)]
    assert ben_attempts == []

    # the guide's command for the instructor, over the learners' homes
    report = subprocess.run([sys.executable, "-m", "tutor", "--lessons", str(MINI_COURSE), "class-report",
                             str(ana_file), str(ben_file)], capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stdout + report.stderr
    rows = {line.split("│")[1].strip(): line for line in report.stdout.splitlines() if line.count("│") > 5}
    assert set(rows) >= {"ana", "ben"}, report.stdout  # each named by their home, though one account ran both
