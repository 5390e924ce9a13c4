"""Who gets a tutor from ``serve-ui``: the attacks of issue 28 against the real server.

A raw HTTP/websocket client (aiohttp) plays the browser, so each test can send what a hostile
page would make a browser send (another site's Origin, a rebound Host name) or what another
local user's process could send (no token at all). The server prints a line for each tutor
process it starts and each request it refuses; "nothing started" is checked on those lines and
on the server's child processes, after a later request proved every earlier one was answered.
"""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

import aiohttp
import pytest

from tests.browser.conftest import SERVING

PAGE = "textual.js"  # on the tutor's page, not on a refusal page


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (textual-serve starts one per tab)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    if int(f.read().rsplit(b")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return found


def descendants(pid: int) -> list[int]:
    found, stack = [], [pid]
    while stack:
        stack.extend(kids := children(stack.pop()))
        found.extend(kids)
    return found


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def screen_shows(ws: aiohttp.ClientWebSocketResponse, wanted: bytes, timeout: float = 90.0) -> bytes:
    """Terminal bytes from the tutor process until ``wanted`` is among them."""
    seen = bytearray()
    deadline = time.monotonic() + timeout
    while wanted not in seen:
        message = await ws.receive(timeout=max(0.1, deadline - time.monotonic()))
        assert message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), f"the websocket ended: {message}"
        if message.type == aiohttp.WSMsgType.BINARY:
            seen += message.data
    return bytes(seen)


async def refused(call) -> int:
    """The status of a websocket handshake the server must refuse."""
    with pytest.raises(aiohttp.WSServerHandshakeError) as refusal:
        ws = await call
        await ws.close()
    return refusal.value.status


async def test_another_site_another_host_or_no_token_start_no_tutor(serve_ui, mini_course_dir, tmp_path):
    server = serve_ui("--lessons", str(mini_course_dir), "--trust-lessons")
    port = int(server.base.rsplit(":", 1)[1].rstrip("/"))
    own = {"Origin": server.base.rstrip("/")}
    async with aiohttp.ClientSession() as http:
        ws = f"{server.base}ws?width=80&height=24"
        # Any page the learner visits can open a websocket to 127.0.0.1:PORT; it cannot choose its Origin.
        assert await refused(http.ws_connect(f"{ws}&token={server.token}",
                                             headers={"Origin": "http://evil.example"})) == 403
        assert await refused(http.ws_connect(f"{ws}&token={server.token}", headers={"Origin": "null"})) == 403
        # DNS rebinding: evil.example now resolves to 127.0.0.1; the browser says Host: evil.example:PORT.
        rebound = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
        assert await refused(http.ws_connect(ws, headers=rebound)) == 403
        async with http.get(server.url, headers={"Host": f"evil.example:{port}"}) as page:
            assert page.status == 403 and PAGE not in await page.text()
        # Another local user (or a page guessing): the right origin, no token or a wrong one.
        assert await refused(http.ws_connect(ws, headers=own)) == 403
        assert await refused(http.ws_connect(f"{ws}&token=not-{server.token}", headers=own)) == 403
        async with http.get(server.base) as page:
            text = await page.text()
            assert page.status == 403 and "?token=" in text and PAGE not in text
        async with http.get(f"{server.base}download/x", cookies={"pytorch-tutor-x": server.token}) as page:
            assert page.status == 403  # a cookie of another name is no token
        # textual-serve's scripts are public: the refusal pages need none, the tutor's page does
        async with http.get(f"{server.base}static/js/textual.js") as script:
            assert script.status == 200

    server.wait_for_line("refused GET /download/x: a wrong token|refused GET /download/x: no token")
    assert len(server.lines("refused ")) == 8, server.output
    assert not server.lines("tab opened") and children(server.process.pid) == []
    for line in server.lines("refused "):
        assert server.token not in line

    # The profile home the server made under umask 022 is the learner's alone.
    home = tmp_path / "home"
    assert mode(home) == 0o700 and mode(home / "profiles") == 0o700
    assert mode(home / "profiles" / "default.sqlite") == 0o600


async def test_a_flood_of_bad_requests_does_not_flood_the_log(serve_ui, mini_course_dir):
    server = serve_ui("--lessons", str(mini_course_dir), "--trust-lessons")
    async with aiohttp.ClientSession() as http:
        for i in range(60):
            async with http.get(f"{server.base}flood/{i}") as page:
                assert page.status == 403
        async with http.get(f"{server.base}static/js/textual.js") as script:  # every earlier one was answered
            assert script.status == 200
    # the rest are summed up when the window ends (the summary itself: test_serve_ui_options)
    assert len(server.lines("refused GET /flood/")) == 20, server.output


@pytest.mark.slow
async def test_the_token_opens_the_map_and_the_cap_holds(serve_ui, mini_course_dir):
    server = serve_ui("--lessons", str(mini_course_dir), "--trust-lessons", serve_args=("--port", "0", "--max-sessions",
                                                                                        "1"))
    own = {"Origin": server.base.rstrip("/")}
    async with aiohttp.ClientSession() as http:
        # The printed address: the token is kept in a cookie and the address shown without it.
        async with http.get(f"{server.url}&fontsize=18", allow_redirects=False) as first:
            assert first.status == 303 and first.headers["Location"] == "./?fontsize=18"
            cookie = first.cookies[next(iter(first.cookies))]
            assert cookie.value == server.token
            assert cookie["httponly"] and cookie["samesite"] == "Strict"
        kept = {"Cookie": f"{cookie.key}={cookie.value}"}  # as the browser sends it back (the jar keeps none for IPs)
        async with http.get(f"{server.base}?fontsize=18", headers=kept) as page:
            assert page.status == 200 and PAGE in await page.text()

        tab = await http.ws_connect(f"{server.base}ws?width=100&height=30", headers={**own, **kept})
        await screen_shows(tab, b"First steps")  # the module map, from a real tutor process
        server.wait_for_line(r"tab opened: 1 of 1")

        async with http.get(server.base, headers=kept) as page:
            text = await page.text()
            assert page.status == 503 and "too many tabs" in text and PAGE not in text
        assert await refused(http.ws_connect(f"{server.base}ws", headers={**own, **kept})) == 503
        server.wait_for_line("refused GET /ws: 1 tutor processes are running")
        assert len(server.lines("tab opened")) == 1 and len(children(server.process.pid)) == 1

        await tab.close()  # closing the tab ends its tutor, and frees its place
        server.wait_for_line(r"tab closed: 0 of 1")
        again = await http.ws_connect(f"{server.base}ws?token={server.token}", headers=own)
        await screen_shows(again, b"First steps")
        await again.close()


@pytest.mark.slow
async def test_jupyter_server_proxy_reaches_the_tutor_only_through_its_socket(serve_ui, mini_course_dir, tmp_path):
    """Started as tutor/web/jupyter.py tells jupyter-server-proxy to start it (a Unix socket in a 0700
    directory, the token in the environment), spoken to as the proxy speaks to it (the browser's
    Host and Origin passed on, the token added as a header)."""
    from tutor.web.jupyter import setup_tutor

    config = setup_tutor()
    assert config["unix_socket"] is True and "{port}" not in config["command"]
    folder = tmp_path / "jsp"  # what jupyter-server-proxy makes with mkdtemp
    folder.mkdir(mode=0o700)
    socket_path = folder / "socket"
    command = [part.format(unix_socket=socket_path, port=0) for part in config["command"]]
    assert command[1:4] == ["-m", "tutor", "serve-ui"]
    server = serve_ui("--lessons", str(mini_course_dir), "--trust-lessons", serve_args=tuple(command[4:]),
                      env=config["environment"], wait_for=re.compile("Serving pytorch-tutor on the Unix socket"))
    assert mode(socket_path) == 0o600
    token = next(iter(config["environment"].values()))
    assert token not in "".join(server.output)
    with open(f"/proc/{server.process.pid}/cmdline", "rb") as f:
        assert token.encode() not in f.read()  # `ps` shows nothing secret

    hub = {"Host": "hub.example.org", "Origin": "https://hub.example.org"}
    proxied = {**hub, **config["request_headers_override"]}
    async with aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(socket_path))) as http:
        async with http.get("http://localhost/", headers=proxied) as page:
            assert page.status == 200 and PAGE in await page.text()
        async with http.get("http://localhost/", headers=hub) as page:
            assert page.status == 403  # the socket alone is not enough
        evil = {**proxied, "Origin": "http://evil.example"}
        assert await refused(http.ws_connect("http://localhost/ws", headers=evil)) == 403
        tab = await http.ws_connect("http://localhost/ws?width=100&height=30", headers=proxied)
        await screen_shows(tab, b"First steps")
        for pid in descendants(server.process.pid):  # the tutor processes and their sandboxes never see it
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    assert token.encode() not in f.read()
            except FileNotFoundError:
                continue
        await tab.close()
    assert len(server.lines("tab opened")) == 1


async def test_a_reverse_proxys_name_is_allowed_only_when_named(serve_ui, mini_course_dir):
    server = serve_ui("--lessons", str(mini_course_dir), "--trust-lessons",
                      serve_args=("--port", "0", "--allow-host", "tutor.example.org"))
    proxied = {"Host": "tutor.example.org", "Origin": "https://tutor.example.org"}
    async with aiohttp.ClientSession() as http:
        async with http.get(server.url, headers=proxied, allow_redirects=False) as page:
            assert page.status == 303  # the token accepted, under the proxy's name
        async with http.get(server.url, headers={**proxied, "Host": "tutor.example.net"}) as page:
            assert page.status == 403
        async with http.get(server.url, headers={**proxied, "Origin": "https://evil.example"}) as page:
            assert page.status == 403


@pytest.mark.slow
async def test_two_servers_on_one_host_keep_their_own_cookies(serve_ui, mini_course_dir):
    """A browser keeps cookies per host name, not per port: both servers' cookies reach both servers.
    Each names its cookie after its own token, so neither overwrites the other's, and each accepts
    only its own."""
    first, second = (serve_ui("--lessons", str(mini_course_dir), "--trust-lessons", serve_args=("--port", "0"))
                     for _ in range(2))
    jar = aiohttp.CookieJar(unsafe=True)  # a browser's jar: it keeps cookies for 127.0.0.1, whatever the port
    async with aiohttp.ClientSession(cookie_jar=jar) as browser:
        for server in (first, second):  # the learner opens both printed addresses
            async with browser.get(server.url, allow_redirects=False) as opened:
                assert opened.status == 303
        names = sorted(cookie.key for cookie in jar)
        assert len(names) == 2 and names[0] != names[1]  # the second did not overwrite the first
        for server in (first, second):  # both cookies go to each; each finds its own
            async with browser.get(server.base) as page:
                assert page.status == 200 and PAGE in await page.text()
    own = {cookie.key: cookie.value for cookie in jar}
    other_name = next(name for name, value in own.items() if value == second.token)
    async with aiohttp.ClientSession() as http:  # the second server's cookie, alone, at the first
        async with http.get(first.base, headers={"Cookie": f"{other_name}={second.token}"}) as page:
            assert page.status == 403 and PAGE not in await page.text()


@pytest.mark.slow
async def test_class_mode_gives_each_learner_their_own_profile_and_one_tab(serve_ui, mini_course_dir, tmp_path):
    """Issue 34 item 1: with a roster, the page asks who you are; each learner's tab runs with their own
    profile, a learner cannot claim another's (the name is signed), and a second tab of one learner is refused."""
    roster = tmp_path / "roster.txt"
    roster.write_text("# the class\nana  ana-secret-1\nben  ben-secret-2\n")
    server = serve_ui("--lessons", str(mini_course_dir), "--trust-lessons",
                      serve_args=("--port", "0", "--roster", str(roster)))
    own = {"Origin": server.base.rstrip("/")}
    async with aiohttp.ClientSession() as http:
        async with http.get(server.url, allow_redirects=False) as first:
            token = first.cookies[next(iter(first.cookies))]
        kept = f"{token.key}={token.value}"
        async with http.get(server.base, headers={"Cookie": kept}) as page:  # the token alone: who are you?
            assert page.status == 200 and "Who are you?" in await page.text()
        assert await refused(http.ws_connect(f"{server.base}ws", headers={**own, "Cookie": kept})) == 403

        async def sign_in(name: str, secret: str):
            async with http.post(f"{server.base}login", data={"name": name, "secret": secret}, allow_redirects=False,
                                 headers={**own, "Cookie": kept}) as answer:
                return answer.status, answer.cookies, await answer.text()

        status, _, text = await sign_in("ana", "ben-secret-2")  # another learner's secret
        assert status == 403 and "not on the roster of this class" in text
        server.wait_for_line("refused a sign-in as 'ana'")
        status, cookies, _ = await sign_in("ana", "ana-secret-1")
        assert status == 303
        learner = cookies[next(k for k in cookies if k.endswith("-learner"))]
        ana = {"Cookie": f"{kept}; {learner.key}={learner.value}"}
        async with http.get(server.base, headers=ana) as page:
            assert page.status == 200 and PAGE in await page.text()
        tab = await http.ws_connect(f"{server.base}ws?width=100&height=30", headers={**own, **ana})
        await screen_shows(tab, b"First steps")
        server.wait_for_line(r"tab opened \(ana\)")
        assert (tmp_path / "home" / "profiles" / "class-ana.sqlite").exists()
        assert await refused(http.ws_connect(f"{server.base}ws", headers={**own, **ana})) == 409  # one writer

        forged = {"Cookie": f"{kept}; {learner.key}=ben.{learner.value.rpartition('.')[2]}"}  # ana's signature
        assert await refused(http.ws_connect(f"{server.base}ws", headers={**own, **forged})) == 403
        assert not (tmp_path / "home" / "profiles" / "class-ben.sqlite").exists()
        await tab.close()
        server.wait_for_line(r"tab closed \(ana\)")

        # the instructor's live view: its own key, which learners (who hold the token) do not have
        live = server.wait_for_line(r"The class now \(for you only, not the learners\): (http://\S+)").group(1)
        async with http.get(live.split("&key=")[0], headers=ana) as page:
            assert page.status == 403 and "ana" not in await page.text()
        async with http.get(live) as page:
            text = await page.text()
            assert page.status == 200 and "<td>ana</td>" in text and "not started" in text, text
            assert "http-equiv=refresh" in text and "<td>ben</td>" not in text  # ben never opened a tab
