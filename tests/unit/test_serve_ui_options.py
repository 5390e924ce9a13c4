"""serve-ui's refusals and warnings, without a browser."""

from __future__ import annotations

import io
import shlex
from pathlib import Path

import pytest

from tutor.web import serve as web_serve
from tutor.web.serve import ServeError, ServeOptions, app_command, is_loopback


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.5", "localhost", "::1", "[::1]"])
def test_loopback_hosts(host):
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.7", "tutor.example.org"])
def test_other_hosts_are_not_loopback(host):
    assert not is_loopback(host)


def test_binding_elsewhere_needs_the_flag(monkeypatch):
    monkeypatch.setattr(web_serve, "_preflight", lambda options: pytest.fail("refused before anything starts"))
    with pytest.raises(ServeError, match="--allow-remote"):
        web_serve.serve(ServeOptions(host="0.0.0.0"))


def test_binding_elsewhere_with_the_flag_warns(monkeypatch):
    monkeypatch.setattr(web_serve, "_preflight", lambda options: None)
    monkeypatch.setattr(web_serve, "_server_class", lambda: _NoServer)
    out, err = io.StringIO(), io.StringIO()
    assert web_serve.serve(ServeOptions(host="0.0.0.0", allow_remote=True), out, err) == 0
    assert "WARNING" in err.getvalue() and "anyone who can reach this port" in err.getvalue()
    assert "loopback only" not in out.getvalue()


def test_loopback_says_so(monkeypatch):
    monkeypatch.setattr(web_serve, "_preflight", lambda options: None)
    monkeypatch.setattr(web_serve, "_server_class", lambda: _NoServer)
    out, err = io.StringIO(), io.StringIO()
    web_serve.serve(ServeOptions(), out, err)
    assert "Listening on loopback only" in out.getvalue() and err.getvalue() == ""


def test_each_connection_runs_this_tutor_with_the_same_options(tmp_path):
    lessons = tmp_path / "a pack; rm -rf ~"
    argv = shlex.split(app_command(ServeOptions(profile="alice", lessons=lessons, allow_grants=True)))
    assert argv[1:3] == ["-m", "tutor"]
    assert argv[argv.index("--profile") + 1] == "alice"
    assert Path(argv[argv.index("--lessons") + 1]) == lessons.resolve()  # one argument, quoted
    assert "--allow-grants" in argv and "--trust-lessons" not in argv


def test_a_bad_course_is_refused_before_serving(tmp_path, capsys):
    from tutor.cli import main

    assert main(["--lessons", str(tmp_path), "serve-ui", "--port", "0"]) == 2
    assert "no course.yaml" in capsys.readouterr().err


class _NoServer:
    def __init__(self, command, options, access, out, roster=None):
        self.host, self.port, self.options = options.host, options.port, options

    async def run(self, stop):
        return None


def test_jupyter_server_proxy_entry_point_serves_on_a_private_socket_with_a_token():
    from tutor.web.access import MIN_TOKEN_LENGTH, TOKEN_ENV, TOKEN_HEADER
    from tutor.web.jupyter import setup_tutor

    config, other = setup_tutor(), setup_tutor()
    command = config["command"]
    assert command[1:4] == ["-m", "tutor", "serve-ui"]
    assert command[command.index("--unix-socket") + 1] == "{unix_socket}"  # jupyter-server-proxy fills it in
    assert config["unix_socket"] is True  # in a temporary directory only this learner can enter
    token = config["environment"][TOKEN_ENV]
    assert len(token) >= MIN_TOKEN_LENGTH and token not in " ".join(command)  # `ps` shows the command
    assert config["request_headers_override"] == {TOKEN_HEADER: token}
    assert other["environment"][TOKEN_ENV] != token  # one secret per Jupyter server
    assert "{" not in token and config["absolute_url"] is False


@pytest.mark.parametrize("token", ["short", "x" * 40 + " ", "x" * 40 + "{port}"])
def test_a_handed_over_token_must_be_a_secret(monkeypatch, token):
    from tutor.web.access import TOKEN_ENV

    monkeypatch.setattr(web_serve, "_preflight", lambda options: pytest.fail("refused before anything starts"))
    monkeypatch.setenv(TOKEN_ENV, token)
    with pytest.raises(ServeError, match=TOKEN_ENV):
        web_serve.serve(ServeOptions())


def test_at_least_one_session(monkeypatch):
    monkeypatch.setattr(web_serve, "_preflight", lambda options: pytest.fail("refused before anything starts"))
    with pytest.raises(ServeError, match="--max-sessions"):
        web_serve.serve(ServeOptions(max_sessions=0))


@pytest.mark.parametrize(("allowed", "host", "ok"), [
    ((), "127.0.0.1:8000", True), ((), "LOCALHOST:8000", True), ((), "[::1]:8000", True),
    ((), "127.0.0.1:8001", False), ((), "127.0.0.1", False), ((), "evil.example:8000", False), ((), None, False),
    (("tutor.example.org",), "tutor.example.org", True), (("tutor.example.org",), "tutor.example.org:443", True),
    (("tutor.example.org:8443",), "tutor.example.org", False), (("tutor.example.org",), "example.org", False),
])
def test_host_names_the_server_answers_to(allowed, host, ok):
    from tutor.web.access import Access

    assert Access(token="t" * 40, port=8000, allowed_hosts=allowed).host_ok(host) is ok


@pytest.mark.parametrize(("origin", "host", "ok"), [
    (None, "127.0.0.1:8000", True), ("http://127.0.0.1:8000", "127.0.0.1:8000", True),
    ("http://localhost:8000", "127.0.0.1:8000", False), ("http://evil.example", "127.0.0.1:8000", False),
    ("null", "127.0.0.1:8000", False), ("file://", "127.0.0.1:8000", False),
    ("https://tutor.example.org", "127.0.0.1:8000", True),  # a reverse proxy that rewrites Host, allowed by name
])
def test_origins_that_are_the_servers_own(origin, host, ok):
    from tutor.web.access import Access

    access = Access(token="t" * 40, port=8000, allowed_hosts=("tutor.example.org",))
    assert access.origin_ok(origin, host) is ok


def test_refusal_lines_are_capped_per_window_and_the_rest_summed_up():
    # issue 28: 403 log lines were not rate-limited (a flood of bad requests flooded the log)
    from tutor.web.access import RefusalLog

    said, scheduled, now = [], [], [100.0]
    log = RefusalLog(said.append, lambda delay, callback: scheduled.append((delay, callback)), burst=3,
                     window=10.0, clock=lambda: now[0])
    for i in range(50):
        now[0] += 0.01
        log.refused(f"refused GET /x{i}")
    assert said == ["refused GET /x0", "refused GET /x1", "refused GET /x2"]
    [(delay, flush)] = scheduled  # one summary, due when the window ends
    assert 9.0 < delay <= 10.0
    flush()
    assert said[-1] == "refused 47 more requests in 10 s (not listed one by one)"
    now[0] += 10.0
    log.refused("refused GET /later")  # a new window lists again
    assert said[-1] == "refused GET /later" and len(scheduled) == 1
