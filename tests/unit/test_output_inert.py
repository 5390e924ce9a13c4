"""Issue 28's one sanitiser walk, on the command line and in plain mode: a hostile pack's text and a
snippet's output reach the terminal inert through every command that shows them.

Every command prints through ``tutor.safe_text.InertStream`` (``tutor.cli.inert_output``); these
run the real commands on a pack whose every visible text is hostile (``tests/hostile_pack.py``).
"""

from __future__ import annotations

import pytest

from tests.hostile_pack import raw_controls, write_hostile_pack
from tutor.cli import main


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTORCH_TUTOR_HOME", str(tmp_path / "home"))
    return write_hostile_pack(tmp_path / "pack")


@pytest.mark.parametrize("command", [["progress"], ["stats"], ["review", "--list"], ["courses"], ["validate"]])
def test_every_command_prints_a_hostile_pack_inert(hostile, capsys, command):
    argv = ["--lessons", str(hostile), "--trust-lessons", *command] + ([str(hostile)] if command == ["validate"] else [])
    main(argv)
    out = capsys.readouterr()
    assert raw_controls(out.out + out.err) == []
    if command == ["progress"]:  # the titles are there, made inert, not dropped
        assert "Mini" in out.out and "First" in out.out and "[@click=app.quit]" in out.out


@pytest.mark.slow  # the real sandbox: the snippet's own hostile output is part of the walk
def test_plain_mode_walks_a_hostile_pack_inert(hostile, shared_sandbox):
    import io

    from tutor.course.loader import load_course
    from tutor.plain.plain_tutor import run_plain
    from tutor.progress.store import ProfileStore
    from tutor.session import Session

    session = Session(load_course(hostile), ProfileStore.open(hostile.parent / "p.sqlite"))
    out = io.StringIO()
    script = "01\n(3, 1)\n\n:hint\n:hint\n:hint\n:skip\n:skip\nanything\n\n1\n\n:quit\n"
    run_plain(session, "default", io.StringIO(script), out, shared_sandbox)
    text = out.getvalue()
    for shown in ("Title", "Intro", "Q ", "Hint ", "Hint2", "Misc", "Expl", "transposed", "SC ", "Model", "opt "):
        assert shown in text, shown  # each hostile text was shown (made inert), not skipped
    assert raw_controls(text) == []


@pytest.mark.parametrize("target, refused", [
    ("https://pytorch.org/docs/stable/tensors.html", None),
    ("http://localhost:8000/notes", None),
    ("javascript:alert(1)", "only http and https"),
    ("JavaScript:alert(1)", "only http and https"),
    ("file:///etc/passwd", "only http and https"),
    ("smb://evil.example/share", "only http and https"),
    ("docs/local.html", "only http and https"),
    ("https://user:pw@evil.example/", "no plain host"),
    ("https:///nohost", "no plain host"),
    ("https://ok.example/\x1b]52;c;QQ==\x07", "control characters"),
    ("https://ok.example/a b", "spaces"),
    ("https://ok.example/\u202egnp.exe", "control characters"),
    ("", "empty"),
])
def test_only_a_plain_web_address_is_openable(target, refused):
    from tutor.safe_text import openable_link

    said = openable_link(target)
    assert (said is None) if refused is None else (refused in said)
