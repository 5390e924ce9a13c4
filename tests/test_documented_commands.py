"""Every command README.md and lessons/README.md show is run, and succeeds (issue 12, item 10).

Placeholders (FILE, DIR, snippet.py, [--list], [PATH...]) are filled with real paths.
Commands that open the full-screen app, install, or take minutes are skipped by the
explicit list below, each with its reason; an entry that no longer matches a shown
command fails the test, so the list cannot go stale.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tutor.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = (ROOT / "README.md", ROOT / "lessons" / "README.md")

SKIPPED = {
    "python3.11 -m venv": "installs into a fresh venv (.ci/run does this)",
    ".venv/bin/pip install": "installs and runs the whole suite (.ci/run does this)",
    "pytorch-tutor": "opens the full-screen app (tests/ui drives it with Pilot)",
    "pytorch-tutor --profile alice": "opens the full-screen app (tests/ui drives it with Pilot)",
    "pytorch-tutor --lessons DIR": "opens the full-screen app (tests/ui drives it with Pilot)",
    "pytorch-tutor --plain": "an interactive session on stdin (tests/unit/test_plain.py scripts it)",
    "pytorch-tutor check [PATH...]": "the whole course's check takes minutes (tests/test_lessons.py runs it)",
    "pytorch-tutor check lessons/": "the whole course's check takes minutes (tests/test_lessons.py runs it)",
    "pytorch-tutor capstone corpus": "the capstone pipeline takes minutes (tests/capstone runs each stage)",
    "pytorch-tutor capstone tokenize": "the capstone pipeline takes minutes (tests/capstone runs each stage)",
    "pytorch-tutor capstone train": "trains a model for minutes (tests/capstone runs a short training)",
    "pytorch-tutor capstone eval": "needs a trained checkpoint (tests/capstone)",
    "pytorch-tutor capstone sample": "needs a trained checkpoint (tests/capstone)",
    "pytorch-tutor capstone finetune": "needs a trained checkpoint (tests/capstone)",
    "pytorch-tutor capstone export": "needs a trained checkpoint (tests/capstone)",
    "pytorch-tutor capstone quantize": "needs a trained checkpoint (tests/capstone)",
    "pytorch-tutor capstone serve": "a server that runs until stopped (tests/capstone)",
}


def shown_commands() -> list[str]:
    """Each command line in a shell fence of the two READMEs, without its comment."""
    commands = []
    for doc in DOCS:
        inside = False
        for line in doc.read_text(encoding="utf-8").splitlines():
            if re.match(r"^```(sh|bash|shell|console)\b", line):
                inside = True
                continue
            if line.startswith("```"):
                inside = False
                continue
            if inside and line.strip() and not line.lstrip().startswith("#"):
                commands.append(re.sub(r"\s+#.*$", "", line.strip()))
    return list(dict.fromkeys(commands))  # shown in both READMEs: run once


def skip_reason(command: str) -> str | None:
    """The reason for the longest skip entry ``command`` is, or starts with as a word."""
    matches = [k for k in SKIPPED if command == k or command.startswith(k + " ") and k != "pytorch-tutor"]
    return SKIPPED[max(matches, key=len)] if matches else None


def test_the_skip_list_names_only_commands_that_are_shown():
    commands = shown_commands()
    assert commands, "no commands found in the READMEs"
    stale = [k for k in SKIPPED if not any(c == k or c.startswith(k + " ") for c in commands)]
    assert not stale, f"skip entries that match no shown command: {stale}"


def _filled(command: str, tmp_path: Path, mini_course_dir: Path) -> list[str]:
    snippet = tmp_path / "snippet.py"
    snippet.write_text("import torch\nx = torch.ones(2, 3)\n")
    words = shlex.split(command)
    out = []
    for word in words[1:]:  # the program name
        if word == "FILE":
            out.append(str(tmp_path / "profile.json"))
        elif word == "DIR":
            out.append(str(mini_course_dir))
        elif word == "snippet.py":
            out.append(str(snippet))
        elif word == "[PATH...]":
            continue
        elif (m := re.fullmatch(r"\[(--[\w-]+)\]", word)):
            out.append(m.group(1))
        else:
            out.append(word)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("command", [c for c in shown_commands() if skip_reason(c) is None])
def test_a_shown_command_succeeds(command, tmp_path, mini_course_dir, monkeypatch, capsys):
    assert command.startswith("pytorch-tutor "), f"{command!r}: not a pytorch-tutor command; run it or skip it"
    monkeypatch.chdir(ROOT)  # the READMEs' relative paths (lessons/...) are from the checkout
    argv = _filled(command, tmp_path, mini_course_dir)
    status = main(argv)
    captured = capsys.readouterr()
    assert status == 0, f"{command!r} exited {status}:\n{captured.out[-2000:]}\n{captured.err[-2000:]}"
