"""``pytorch-tutor serve-ui``: the same Textual app in a browser, through textual-serve.

textual-serve starts one app process per browser connection (a websocket), so every
learner's tab has its own tutor process and that process its own sandbox zygote; the
process ends when the tab closes. Nothing here imports Textual or torch: the server only
relays bytes between the browser's xterm.js and the app processes it starts.

The server binds to loopback unless told otherwise, because whoever reaches the port
can run the tutor (and so snippets in its sandbox) as the user who started it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import shlex
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

TEMPLATES = Path(__file__).parent / "templates"


class ServeError(Exception):
    """Something the instructor must fix before the server can start; the message says what."""


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    allow_remote: bool = False
    profile: str = "default"
    lessons: Path | None = None  # --course is resolved to its directory before this
    trust_lessons: bool = False
    allow_grants: bool = False


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name other than localhost: it may resolve anywhere
        return False


def app_command(options: ServeOptions) -> str:
    """The shell command textual-serve runs for each connection: this Python, this tutor, these lessons."""
    argv = [sys.executable, "-m", "tutor", "--profile", options.profile]
    if options.lessons is not None:
        argv += ["--lessons", str(Path(options.lessons).resolve())]
    if options.trust_lessons:
        argv.append("--trust-lessons")
    if options.allow_grants:
        argv.append("--allow-grants")
    return shlex.join(argv)


def _preflight(options: ServeOptions) -> None:
    """Refuse here, once, what every connection would refuse: a bad course, an unconfinable
    third-party pack, grants nobody agreed to (asked on this terminal; the answer is kept in
    the profile, so the app processes find it)."""
    from tutor.startup import StartupError, ask_on_terminal, open_course_and_profile

    try:
        _course, store = open_course_and_profile(options.profile, options.lessons, options.trust_lessons,
                                                 consent=ask_on_terminal, allow_grants=options.allow_grants)
    except StartupError as exc:
        raise ServeError(str(exc)) from None
    store.close()


def _server_class():
    from aiohttp import web
    from textual_serve.server import Server

    class TutorServer(Server):
        """textual-serve with the tutor's page (no font fetched from the internet, URLs that work
        behind a path-prefixing proxy such as jupyter-server-proxy) and its own start-up lines."""

        def __init__(self, command: str, host: str, port: int, out: TextIO) -> None:
            super().__init__(command, host=host, port=port, title="pytorch-tutor", templates_path=TEMPLATES)
            self.out = out
            self.bound: tuple[str, int] | None = None

        async def on_startup(self, app: web.Application) -> None:  # the logo and "Ctrl+C" line replaced
            pass

        async def handle_index(self, request: web.Request) -> Any:
            import aiohttp_jinja2

            # Relative URLs: the page computes the websocket address from its own location.
            context = {"font_size": _font_size(request.query.get("fontsize", "16")),
                       "config": {"static": {"url": "static/"}}, "application": {"name": self.title}}
            return aiohttp_jinja2.render_template("app_index.html", request, context)

        async def run(self, stop: asyncio.Event) -> None:
            runner = web.AppRunner(await self._make_app(), handle_signals=False, access_log=None)
            await runner.setup()
            try:
                site = web.TCPSite(runner, self.host, self.port)
                await site.start()
                host, port = runner.addresses[0][:2]
                self.bound = (host, port)
                self.public_url = f"http://{_url_host(self.host)}:{port}"
                print(f"Serving pytorch-tutor on {self.public_url}/ (ctrl+c stops it)", file=self.out, flush=True)
                await stop.wait()
            finally:
                await runner.cleanup()  # closes every websocket, so every app process is told to quit

    return TutorServer


def _font_size(raw: str) -> int:
    try:
        return min(max(int(raw), 8), 40)
    except ValueError:
        return 16


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def serve(options: ServeOptions, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Serve until interrupted; return the exit status."""
    if not is_loopback(options.host) and not options.allow_remote:
        raise ServeError(f"{options.host} is not a loopback address: anyone who reaches it could run the "
                         "tutor as you. Pass --allow-remote to bind there anyway (behind a proxy that "
                         "authenticates learners, such as JupyterHub; see README).")
    _preflight(options)
    if is_loopback(options.host):
        print("Listening on loopback only: browsers on this machine can connect, no other machine can.",
              file=out)
    else:
        print(f"WARNING: listening on {options.host}: anyone who can reach this port can run the tutor, and "
              "snippets in its sandbox, as this user. Put it behind an authenticating proxy.", file=err)
    print("Each browser tab gets its own tutor process with its own sandbox; closing the tab ends it.",
          file=out)
    server = _server_class()(app_command(options), options.host, options.port, out)
    return asyncio.run(_serve_until_signalled(server))


async def _serve_until_signalled(server) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await server.run(stop)
    except OSError as exc:  # the port is taken, the address is not this machine's
        raise ServeError(f"cannot listen on {server.host}:{server.port}: {exc.strerror or exc}") from None
    return 0
