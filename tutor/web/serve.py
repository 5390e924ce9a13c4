"""``pytorch-tutor serve-ui``: the same Textual app in a browser, through textual-serve.

textual-serve starts one app process per browser connection (a websocket), so every
learner's tab has its own tutor process and that process its own sandbox zygote; the
process ends when the tab closes. Nothing here imports Textual or torch: the server only
relays bytes between the browser's xterm.js and the app processes it starts.

Whoever gets a tutor process from the server runs snippets as the user who started it and
reads that user's answers, so the server binds to loopback unless told otherwise, starts no
process for a request without its secret token or from another site (``tutor.web.access``),
and runs at most ``--max-sessions`` tutor processes at once.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import shlex
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlencode

from tutor.safe_text import safe_line
from tutor.web.access import TOKEN_ENV, TOKEN_HEADER, TOKEN_QUERY, Access, RefusalLog, new_token, token_problem

TEMPLATES = Path(__file__).parent / "templates"
DEFAULT_MAX_SESSIONS = 4  # each is a tutor process, its sandbox zygote and runner: ~270 MiB PSS


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
    allow_hosts: tuple[str, ...] = ()  # Host names a reverse proxy uses (--allow-host)
    max_sessions: int = DEFAULT_MAX_SESSIONS
    unix_socket: Path | None = None  # listen here instead of host:port (jupyter-server-proxy)
    idle_minutes: float = 60.0  # each tab's tutor ends after this long without input (0: never; tutor/app/idle.py)


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
    if options.idle_minutes > 0:
        argv += ["--idle-exit", f"{options.idle_minutes:g}"]
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
    import aiohttp_jinja2
    from aiohttp import web
    from textual_serve.server import Server

    class TutorServer(Server):
        """textual-serve with the tutor's page (no font fetched from the internet, URLs that work
        behind a path-prefixing proxy such as jupyter-server-proxy), its own start-up lines, the
        access checks before every route but the static files, and a cap on tutor processes."""

        def __init__(self, command: str, options: ServeOptions, access: Access, out: TextIO) -> None:
            super().__init__(command, host=options.host, port=options.port, title="pytorch-tutor",
                             templates_path=TEMPLATES)
            self.options, self.access, self.out = options, access, out
            self.bound: tuple[str, int] | None = None
            self.sessions = 0  # tutor processes running now, one per open tab
            self.refusals = RefusalLog(self.say, lambda delay, callback: asyncio.get_running_loop().call_later(
                delay, callback))

        def say(self, line: str) -> None:
            print(line, file=self.out, flush=True)

        async def on_startup(self, app: web.Application) -> None:  # the logo and "Ctrl+C" line replaced
            pass

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(self._guard)
            return app

        @web.middleware
        async def _guard(self, request: web.Request, handler) -> web.StreamResponse:
            host, origin = request.headers.get("Host"), request.headers.get("Origin")
            if not self.access.host_ok(host):
                return self._refuse(request, 403, f"Host {host!r} is not a name this server answers to",
                                    "This address is not the tutor's",
                                    "The tutor answers only to the address it printed when it started. "
                                    "Open that address (an instructor behind a proxy adds its name with "
                                    "--allow-host).")
            if not self.access.origin_ok(origin, host):
                return self._refuse(request, 403, f"a request from another site ({origin!r})",
                                    "Another site cannot open the tutor",
                                    "This request came from a page that is not the tutor's own. "
                                    "Open the tutor from the address it printed when it started.")
            if request.path.startswith("/static/"):  # textual-serve's own scripts, styles and font
                return await handler(request)
            from_query = request.query.get(TOKEN_QUERY)
            presented = (from_query or request.headers.get(TOKEN_HEADER)
                         or request.cookies.get(self.access.cookie_name))
            if not self.access.token_ok(presented):
                why = "a wrong token" if presented else "no token"
                return self._refuse(request, 403, f"{why} for {request.path!r}", "This link has no valid token",
                                    "Open the full address that `pytorch-tutor serve-ui` printed when it "
                                    "started: it ends in ?token=… . A token from an earlier run of the "
                                    "server no longer works.")
            if from_query and request.path == "/" and request.method == "GET":
                return self._keep_token(request)
            return await handler(request)

        def _keep_token(self, request: web.Request) -> web.StreamResponse:
            """The token arrived in the address: keep it in a cookie the page's own requests carry
            (HttpOnly: no script reads it; SameSite=Strict: no other site's request sends it) and
            show the address without it, so it does not linger in the address bar or history."""
            rest = request.query.copy()
            rest.popall(TOKEN_QUERY)
            location = "./" + ("?" + urlencode(list(rest.items())) if rest else "")
            response = web.HTTPSeeOther(location=location)
            response.set_cookie(self.access.cookie_name, self.access.token, httponly=True, samesite="Strict")
            return response

        def _refuse(self, request: web.Request, status: int, log: str, title: str, message: str):
            self.refusals.refused(f"refused {request.method} {safe_line(request.path, 80)}: {safe_line(log, 240)}")
            return aiohttp_jinja2.render_template("refused.html", request, {"title": title, "message": message},
                                                  status=status)

        def _at_cap(self) -> bool:
            return self.sessions >= self.options.max_sessions

        def _cap_page(self, request: web.Request):
            cap = self.options.max_sessions
            return self._refuse(request, 503, f"{cap} tutor processes are running, the most this server runs",
                                "The tutor is open in too many tabs",
                                f"This server runs at most {cap} tutor{'s' if cap != 1 else ''} at once (one per "
                                "open tab), and that many are open. Close a tab you no longer use, then reload "
                                "this page.")

        async def handle_index(self, request: web.Request) -> Any:
            if self._at_cap():
                return self._cap_page(request)
            # Relative URLs: the page computes the websocket address from its own location.
            context = {"font_size": _font_size(request.query.get("fontsize", "16")),
                       "config": {"static": {"url": "static/"}}, "application": {"name": self.title}}
            return aiohttp_jinja2.render_template("app_index.html", request, context)

        async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
            if self._at_cap():  # counted before the first await: two handshakes cannot both take the last place
                return self._cap_page(request)
            self.sessions += 1
            self.say(f"tab opened: {self.sessions} of {self.options.max_sessions} tutor processes running")
            try:
                return await super().handle_websocket(request)  # returns once the tutor process has ended
            finally:
                self.sessions -= 1
                self.say(f"tab closed: {self.sessions} of {self.options.max_sessions} tutor processes running")

        async def run(self, stop: asyncio.Event) -> None:
            runner = web.AppRunner(await self._make_app(), handle_signals=False, access_log=None)
            await runner.setup()
            try:
                if self.options.unix_socket is not None:
                    await self._start_on_unix_socket(runner, self.options.unix_socket)
                else:
                    site = web.TCPSite(runner, self.host, self.port)
                    await site.start()
                    host, port = runner.addresses[0][:2]
                    self.bound, self.access.port = (host, port), port
                    self.public_url = f"http://{_url_host(self.host)}:{port}"
                    self.say(f"Serving pytorch-tutor on {self.public_url}/?{TOKEN_QUERY}={self.access.token} "
                             "(ctrl+c stops it)")
                    self.say("Open that address: the token in it is this server's secret; a page without it, or "
                             "from another site or another Host name, starts no tutor.")
                await stop.wait()
            finally:
                await runner.cleanup()  # closes every websocket, so every app process is told to quit

        async def _start_on_unix_socket(self, runner, path: Path) -> None:
            site = web.UnixSite(runner, str(path))
            await site.start()
            os.chmod(path, 0o600)  # the directory (0700, the proxy's) already keeps others out; so does this
            self.say(f"Serving pytorch-tutor on the Unix socket {path} (for the proxy that started it; it "
                     f"must add the token in the {TOKEN_HEADER} header)")

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
    if options.unix_socket is None and not is_loopback(options.host) and not options.allow_remote:
        raise ServeError(f"{options.host} is not a loopback address: anyone who reaches it could try to run "
                         "the tutor as you. Pass --allow-remote to bind there anyway (behind a proxy that "
                         "authenticates learners, such as JupyterHub; see README).")
    if options.max_sessions < 1:
        raise ServeError("--max-sessions must be at least 1")
    access = _access(options)
    _preflight(options)
    if options.unix_socket is not None:
        pass  # the proxy's own start-up says where it relays; the socket's line comes once it listens
    elif is_loopback(options.host):
        print("Listening on loopback only: browsers on this machine can connect, no other machine can.",
              file=out)
    else:
        print(f"WARNING: listening on {options.host}: anyone who can reach this port and has the token can run "
              "the tutor, and snippets in its sandbox, as this user. Put it behind an authenticating proxy "
              "that serves it over TLS.", file=err)
    print(f"Each browser tab gets its own tutor process with its own sandbox, at most {options.max_sessions} at "
          "once (--max-sessions); closing the tab ends it.", file=out)
    server = _server_class()(app_command(options), options, access, out)
    return asyncio.run(_serve_until_signalled(server))


def _access(options: ServeOptions) -> Access:
    """The server's checks, with the token a launcher handed over in the environment (taken out of it,
    so the tutor processes and their sandboxes never inherit it) or a fresh one."""
    token = os.environ.pop(TOKEN_ENV, "") or new_token()
    problem = token_problem(token)
    if problem:
        raise ServeError(problem)
    for name in options.allow_hosts:
        if not name or any(c.isspace() or c in "/?#@" for c in name):
            raise ServeError(f"--allow-host {name!r}: give a host name, optionally with :PORT, nothing else")
    return Access(token=token, bound_host=options.host, allowed_hosts=tuple(options.allow_hosts),
                  unix_socket=options.unix_socket is not None)


async def _serve_until_signalled(server) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await server.run(stop)
    except OSError as exc:  # the port is taken, the address is not this machine's, the socket's folder is gone
        where = server.options.unix_socket or f"{server.host}:{server.port}"
        raise ServeError(f"cannot listen on {where}: {exc.strerror or exc}") from None
    return 0
