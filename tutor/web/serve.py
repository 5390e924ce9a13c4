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
import hmac
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
from tutor.locations import data_dir
from tutor.web.roster import (NAME, PROFILE_PREFIX, LearnerCookie, Roster, RosterError, learner_profile,
                              read_roster)

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
    roster: Path | None = None  # class mode: learners sign in by name and secret (``roster.py``)
    learner_header: str = ""  # class mode behind an authenticating proxy: the header that names the learner

    @property
    def class_mode(self) -> bool:
        return self.roster is not None or bool(self.learner_header)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name other than localhost: it may resolve anywhere
        return False


def app_command(options: ServeOptions, profile: str | None = None) -> str:
    """The shell command textual-serve runs for each connection: this Python, this tutor, these lessons,
    and the profile (a class's learner's own, else the server's)."""
    argv = [sys.executable, "-m", "tutor", "--profile", profile or options.profile]
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

        def __init__(self, command: str, options: ServeOptions, access: Access, out: TextIO,
                     roster: Roster | None = None) -> None:
            super().__init__(command, host=options.host, port=options.port, title="pytorch-tutor",
                             templates_path=TEMPLATES)
            self.options, self.access, self.out = options, access, out
            self.bound: tuple[str, int] | None = None
            self.sessions = 0  # tutor processes running now, one per open tab
            # class mode (``roster.py``): who signed in, and whose tutor is running (one writer per profile)
            self.roster, self.learner_cookie = roster, LearnerCookie(access.token)
            self.learner_cookie_name = access.cookie_name + "-learner"
            self.learners_open: set[str] = set()
            self.instructor_key = new_token() if options.class_mode else ""  # the live view's own secret
            self.refusals = RefusalLog(self.say, lambda delay, callback: asyncio.get_running_loop().call_later(
                delay, callback))

        def say(self, line: str) -> None:
            print(line, file=self.out, flush=True)

        async def on_startup(self, app: web.Application) -> None:  # the logo and "Ctrl+C" line replaced
            pass

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(self._guard)
            if self.roster is not None:
                app.router.add_post("/login", self.handle_login)
            if self.options.class_mode:
                app.router.add_get("/class", self.handle_class)
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
            if self.options.class_mode and request.path not in ("/login", "/class"):
                learner = self._learner(request)
                if learner is None:
                    if request.path == "/" and request.method == "GET" and self.roster is not None:
                        return self._login_page(request, "")
                    return self._refuse(request, 403, f"no learner signed in for {request.path!r}",
                                        "Sign in first", "This tutor is run for a class: open its address and "
                                        "sign in with the name and secret your instructor gave you.")
                request["learner"] = learner
            return await handler(request)

        def _learner(self, request: web.Request) -> str | None:
            """The signed-in learner: named by the proxy's header, else by this server's signed cookie."""
            if self.options.learner_header:
                name = request.headers.get(self.options.learner_header, "")
            else:
                name = self.learner_cookie.read(request.cookies.get(self.learner_cookie_name)) or ""
            if not NAME.fullmatch(name) or (self.roster is not None and name not in self.roster.secrets):
                return None
            return name

        async def handle_class(self, request: web.Request) -> web.StreamResponse:
            """The instructor's live view of the class (``tutor/classroom/live.py``): its own key, which only
            the instructor's terminal showed (learners hold the server's token too)."""
            if not hmac.compare_digest(request.query.get("key", ""), self.instructor_key):
                return self._refuse(request, 403, "the live view without the instructor's key",
                                    "This page is the instructor's", "Open the address serve-ui printed for the "
                                    "live view of the class: it carries the instructor's key.")
            from tutor.classroom.live import class_now
            from tutor.classroom.page import live_page

            profiles = sorted((data_dir() / "profiles").glob(f"{PROFILE_PREFIX}*.sqlite"))
            now = await asyncio.to_thread(class_now, self.course, profiles)
            return web.Response(text=live_page(now, self.course.title), content_type="text/html")

        @property
        def course(self):
            if getattr(self, "_course", None) is None:
                from tutor.course.loader import load_course
                from tutor.locations import builtin_course_dir

                root = self.options.lessons or builtin_course_dir()
                self._course = load_course(root, "" if self.options.lessons is None else str(root))
            return self._course

        def _login_page(self, request: web.Request, error: str, status: int = 200):
            return aiohttp_jinja2.render_template("login.html", request, {"error": error}, status=status)

        async def handle_login(self, request: web.Request) -> web.StreamResponse:
            form = await request.post()
            name, secret = str(form.get("name", ""))[:40], str(form.get("secret", ""))[:200]
            if self.roster is None or not self.roster.admits(name, secret):
                self.refusals.refused(f"refused a sign-in as {safe_line(name, 40)!r}: not a name and secret "
                                      "of the roster")
                return self._login_page(request, "That name and secret are not on the roster of this class.", 403)
            response = web.HTTPSeeOther(location="./")
            response.set_cookie(self.learner_cookie_name, self.learner_cookie.make(name), httponly=True,
                                samesite="Strict")
            self.say(f"{name} signed in")
            return response

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
            learner = request.get("learner")
            if learner is not None and learner in self.learners_open:  # one writer per profile
                return self._refuse(request, 409, f"{learner}'s tutor is already open in another tab",
                                    "Your tutor is open in another tab",
                                    "Your progress is kept by one tutor at a time: close the other tab (or "
                                    "window) where you are signed in, then reload this page.")
            self.sessions += 1
            if learner is not None:
                self.learners_open.add(learner)
            who = f" ({learner})" if learner is not None else ""
            self.say(f"tab opened{who}: {self.sessions} of {self.options.max_sessions} tutor processes running")
            try:
                if learner is None:
                    return await super().handle_websocket(request)  # returns once the tutor process has ended
                return await self._tab(request, app_command(self.options, learner_profile(learner)))
            finally:
                self.sessions -= 1
                self.learners_open.discard(learner)
                self.say(f"tab closed{who}: {self.sessions} of {self.options.max_sessions} tutor processes running")

        async def _tab(self, request: web.Request, command: str) -> web.StreamResponse:
            """textual-serve's websocket handler with this learner's own command (its profile), not the
            server's one: the same steps as ``Server.handle_websocket``, which reads ``self.command``."""
            from textual_serve.app_service import AppService
            from textual_serve.server import to_int

            websocket = web.WebSocketResponse(heartbeat=15)
            width = to_int(request.query.get("width", "80"), 80)
            height = to_int(request.query.get("height", "24"), 24)
            app_service = None
            try:
                await websocket.prepare(request)
                app_service = AppService(command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                                         close=websocket.close, download_manager=self.download_manager,
                                         debug=self.debug)
                await app_service.start(width, height)
                await self._process_messages(websocket, app_service)
            except asyncio.CancelledError:
                await websocket.close()
            finally:
                if app_service is not None:
                    await app_service.stop()
            return websocket

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
                    if self.instructor_key:
                        self.say(f"The class now (for you only, not the learners): {self.public_url}/class?"
                                 f"{TOKEN_QUERY}={self.access.token}&key={self.instructor_key}")
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
    roster = None
    if options.roster is not None:
        try:
            roster = read_roster(options.roster)
        except RosterError as exc:
            raise ServeError(str(exc)) from None
    if options.learner_header and (not options.learner_header.replace("-", "").isalnum()
                                   or options.learner_header.lower() in ("host", "origin", "cookie")):
        raise ServeError(f"--learner-header {options.learner_header!r}: give the name of the header your proxy "
                         "sets (X-Remote-User, say)")
    if roster is not None:
        print(f"Class mode: {len(roster.secrets)} learners on the roster sign in by name and secret; each tab runs "
              "with its learner's own profile (class-NAME), one tab per learner.", file=out)
    elif options.learner_header:
        print(f"Class mode: the proxy names each learner in the {options.learner_header} header (and must send the "
              "token); each tab runs with its learner's own profile (class-NAME), one tab per learner.", file=out)
    else:
        print(f"Single-user mode: every tab runs as the profile {options.profile!r}, with its answers and files. "
              "For a class, give each learner their own with --roster FILE (or --learner-header).", file=out)
    server = _server_class()(app_command(options), options, access, out, roster)
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
