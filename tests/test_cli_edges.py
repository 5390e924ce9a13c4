"""Command-line rough edges a new learner hit (issue 12, items 4, 9, 10)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import shutil

import pytest

from tutor.cli import main


def _exit_status(argv) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's --help
        return exc.code


def test_capstone_help_reaches_the_capstone(capsys):
    assert _exit_status(["capstone", "--help"]) == 0
    captured = capsys.readouterr()
    assert "usage: pytorch-tutor capstone" in captured.out and "unrecognized" not in captured.err
    # a profile named like the command, and a stage's own --help
    assert _exit_status(["--profile", "capstone", "capstone", "train", "--help"]) == 0
    assert "usage: pytorch-tutor capstone train" in capsys.readouterr().out


@pytest.mark.slow
def test_run_states_the_verdict_in_its_header(tmp_path, capsys):
    snippet = tmp_path / "s.py"
    snippet.write_text("x = (1,\n")
    assert main(["run", str(snippet)]) == 1
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    assert "error (SyntaxError)" in header and "— ok" not in header, header
    snippet.write_text("x = 1\n")
    assert main(["run", str(snippet)]) == 0
    assert " — ok in " in capsys.readouterr().out.splitlines()[0]


def test_progress_columns_line_up_whatever_the_status(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["--profile", "cols", "progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    table = [line for line in lines if re.match(r"^\d\d ", line)]
    assert any("locked (needs 36, 23, 27)" in line for line in table)
    # the drill counts end in the same column on every row, and no row is wider than the terminal
    ends = {m.end() for line in table if (m := re.search(r"\d+/\d+", line))}
    assert len(ends) == 1, ends
    assert max(len(line) for line in lines) <= 80


def test_a_module_id_mismatch_is_reported_at_its_line_even_beside_other_errors(tmp_path, mini_course_dir, capsys):
    root = tmp_path / "course"
    shutil.copytree(mini_course_dir, root)
    path = root / "04_after.yaml"
    text = path.read_text()
    line = text.splitlines().index('module: "04"') + 1
    path.write_text(text.replace('module: "04"', 'module: "05"'))
    assert main(["validate", str(root)]) == 1
    assert f"04_after.yaml:{line}:1" in capsys.readouterr().out
    # and when the file has another error too, both are said
    path.write_text(text.replace('module: "04"', 'module: "05"').replace("drills:", "drills: 3\nbogus_key: 1\nx:", 1))
    assert main(["validate", str(root)]) == 1
    out = capsys.readouterr().out
    assert "course.yaml lists it as '04'" in out and f"04_after.yaml:{line}:1" in out


def test_watch_without_lessons_says_what_it_needs(capsys, mini_course_dir):
    assert main(["--watch"]) == 2
    assert "use it with --lessons DIR" in capsys.readouterr().err
    assert main(["--watch", "--lessons", str(mini_course_dir), "validate"]) == 2
    assert "use it with --lessons DIR" in capsys.readouterr().err


def test_an_author_previews_a_locked_module_in_plain_mode_with_watch(tmp_path, mini_course_dir):
    # issue 33 item 9: without --watch, module 02 is locked until 01 is done; an author previewing it is not
    env = {**os.environ, "NO_COLOR": "1", "PYTORCH_TUTOR_HOME": str(tmp_path)}
    command = [sys.executable, "-m", "tutor", "--lessons", str(mini_course_dir), "--trust-lessons", "--plain"]
    locked = subprocess.run(command, input="02\n:quit\n", capture_output=True, text=True, env=env, timeout=120)
    assert "Module 02 is locked: needs 01" in locked.stdout
    opened = subprocess.run(command + ["--watch"], input="02\n:quit\n", capture_output=True, text=True, env=env,
                            timeout=120)
    assert opened.returncode == 0, opened.stderr
    assert "is locked" not in opened.stdout and "Second steps" in opened.stdout, opened.stdout
