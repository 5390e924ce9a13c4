"""Who may use a ``serve-ui`` server: its secret token, its own Host names and its own Origin.

Whoever gets a tutor process from the server runs code (snippets, in the sandbox) as the user
who started it and reads that user's answers, so three checks stand before any process:

* **the token**: a per-server secret, printed once in the address the server gives at start
  (``http://127.0.0.1:PORT/?token=…``) or handed over by a proxy (jupyter-server-proxy adds it
  as a header on every request it relays). It is never taken from the command line, where
  every local user could read it in ``ps``. A browser shows it once; the server then keeps it
  in an HttpOnly, SameSite=Strict cookie so reloads and the page's websocket work.
* **the Host header**, against DNS rebinding (a page whose name resolves to 127.0.0.1 is not
  this server's page): only the names the server answers to: loopback names with the bound
  port, the address it was started on, and ``--allow-host`` names (a reverse proxy's). A Unix
  socket has no names to guard: no browser reaches it except through the proxy that owns it.
* **the Origin header**, which browsers send on every websocket handshake and cross-site
  request: another site's page (``http://evil.example``) must not drive the tutor, even on a
  browser that holds the cookie. A request without one is not a browser's cross-site request.

Nothing here imports aiohttp: ``tutor.web.serve`` applies the checks to each request.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

TOKEN_ENV = "PYTORCH_TUTOR_SERVE_TOKEN"  # a launcher (tutor/web/jupyter.py) hands the server its token here
TOKEN_HEADER = "X-Pytorch-Tutor-Token"  # and a proxy presents it here on each request it relays
TOKEN_QUERY = "token"
MIN_TOKEN_LENGTH = 32
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def new_token() -> str:
    return secrets.token_urlsafe(32)  # 256 bits


def token_problem(token: str) -> str | None:
    """Why a token handed to the server is unfit, or None."""
    if len(token) < MIN_TOKEN_LENGTH:
        return f"${TOKEN_ENV} is too short to be a secret: use at least {MIN_TOKEN_LENGTH} random characters"
    if not all(c.isascii() and (c.isalnum() or c in "-_.~") for c in token):
        return f"${TOKEN_ENV} must be URL-safe characters (letters, digits, '-', '_', '.', '~')"
    return None


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


@dataclass
class Access:
    """The checks for one server; ``port`` is set once the server is bound (None on a Unix socket)."""

    token: str
    bound_host: str = "127.0.0.1"
    port: int | None = None
    allowed_hosts: tuple[str, ...] = ()  # --allow-host: "NAME" (any port) or "NAME:PORT"
    unix_socket: bool = False
    _names: frozenset[str] = field(default=frozenset(), init=False)

    @property
    def cookie_name(self) -> str:
        """Per server (two servers on one machine share the browser's cookies for 127.0.0.1),
        and naming nothing: a digest of the token, not the token."""
        return "pytorch-tutor-" + hashlib.sha256(self.token.encode()).hexdigest()[:12]

    def token_ok(self, presented: str | None) -> bool:
        if not presented:
            return False
        return hmac.compare_digest(presented.encode("utf-8", "replace"), self.token.encode())

    def host_ok(self, host: str | None) -> bool:
        """``host`` is the request's Host header."""
        if self.unix_socket:
            return True
        if not host:
            return False
        host = host.strip().lower()
        if host in self._own_names():
            return True
        for allowed in self.allowed_hosts:
            allowed = allowed.lower()
            if host == allowed or (not _has_port(allowed) and _strip_port(host) == allowed):
                return True
        return False

    def origin_ok(self, origin: str | None, host: str | None) -> bool:
        """Same origin: the page that opens the websocket (or posts) came from this server, as the
        browser addressed it (its Host), or from a name the instructor allowed."""
        if origin is None:  # not sent: not a browser's cross-site request
            return True
        try:
            parts = urlsplit(origin.strip())
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False  # includes "null", which sandboxed frames and file:// pages send
        netloc = parts.netloc.lower()
        if host and netloc == host.strip().lower():
            return True
        return any(netloc == allowed.lower() or (not _has_port(allowed) and _strip_port(netloc) == allowed.lower())
                   for allowed in self.allowed_hosts)

    def _own_names(self) -> frozenset[str]:
        if not self._names and self.port is not None:
            names = set(LOOPBACK_NAMES)
            if self.bound_host not in ("0.0.0.0", "::", "[::]", ""):  # a wildcard is no name a browser uses
                names.add(_bracketed(self.bound_host).lower())
            with_port = {f"{name}:{self.port}" for name in names}
            if self.port == 80:
                with_port |= names
            self._names = frozenset(with_port)
        return self._names

    def own_names(self) -> list[str]:
        """The Host values this server answers to, for its start-up lines."""
        return sorted(self._own_names()) + list(self.allowed_hosts)


def _has_port(name: str) -> bool:
    return _strip_port(name) != name


def _strip_port(name: str) -> str:
    if name.startswith("["):  # [::1]:8000
        return name.split("]", 1)[0] + "]"
    head, sep, tail = name.rpartition(":")
    return head if sep and tail.isdigit() else name


class RefusalLog:
    """The server's "refused …" lines, at most ``burst`` per ``window`` seconds.

    A flood of bad requests (a scanner, a page retrying a websocket) must not flood the
    instructor's terminal or log: past the burst, refusals are counted, and one line says how
    many when the window ends (``schedule(delay, callback)`` arranges that; the server passes
    its event loop's ``call_later``). ``clock`` is injectable so tests need not wait."""

    def __init__(self, say: Callable[[str], None], schedule: Callable[[float, Callable[[], None]], object],
                 burst: int = 20, window: float = 10.0, clock: Callable[[], float] = time.monotonic):
        self.say, self.schedule, self.burst, self.window, self.clock = say, schedule, burst, window, clock
        self.opened = -float("inf")  # when the current window began
        self.shown = self.held = 0

    def refused(self, line: str) -> None:
        now = self.clock()
        if now - self.opened >= self.window:
            self.flush()
            self.opened, self.shown = now, 0
        if self.shown < self.burst:
            self.shown += 1
            self.say(line)
            return
        if self.held == 0:
            self.schedule(max(0.0, self.opened + self.window - now), self.flush)
        self.held += 1

    def flush(self) -> None:
        if self.held:
            held, self.held = self.held, 0
            self.say(f"refused {held} more request{'s' if held != 1 else ''} in {self.window:g} s "
                     "(not listed one by one)")
