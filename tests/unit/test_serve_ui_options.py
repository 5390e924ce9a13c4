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
    def __init__(self, command, host, port, out):
        self.host, self.port = host, port

    async def run(self, stop):
        return None


def test_jupyter_server_proxy_entry_point_runs_serve_ui_on_the_proxys_port():
    from tutor.web.jupyter import setup_tutor

    config = setup_tutor()
    command = config["command"]
    assert command[1:4] == ["-m", "tutor", "serve-ui"]
    assert command[command.index("--port") + 1] == "{port}"  # jupyter-server-proxy fills it in
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert config["absolute_url"] is False
