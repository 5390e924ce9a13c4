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
    ".venv/bin/python -m pytest": "the test suite itself (.ci/run runs it; this test is part of it)",
    "pytorch-tutor": "opens the full-screen app (tests/ui drives it with Pilot)",
    "pytorch-tutor --profile alice": "opens the full-screen app (tests/ui drives it with Pilot)",
    "pytorch-tutor --lessons DIR": "opens the full-screen app (tests/ui drives it with Pilot)",
    "pytorch-tutor --module 07": "opens the full-screen app (tests/ui/test_open_at.py)",
    "pytorch-tutor --plain": "an interactive session on stdin (tests/unit/test_plain.py scripts it)",
    "pytorch-tutor check lessons/": "the whole course's check takes minutes (tests/test_lessons.py runs it)",
    "pytorch-tutor check lessons/ --setting machine --setting default/1 --setting avx2/4":
        "the whole course under three settings takes many minutes (tests/test_lessons.py runs it under two; "
        "tests/test_cli.py runs --setting on a small module)",
    "pytorch-tutor capstone corpus": "the capstone pipeline takes minutes (tests/capstone runs each stage)",
    "pytorch-tutor capstone tokenize": "the capstone pipeline takes minutes (tests/capstone runs each stage)",
    "pytorch-tutor capstone train": "trains a model for minutes (tests/capstone runs a short training)",
    "pytorch-tutor capstone eval": "needs a trained checkpoint (tests/capstone)",
    "pytorch-tutor capstone sample": "needs a trained checkpoint (tests/capstone)",
    "pytorch-tutor capstone finetune": "needs a trained checkpoint (tests/capstone)",
    "pytorch-tutor capstone export": "needs a trained checkpoint (tests/capstone)",
    "pytorch-tutor capstone quantize": "needs a trained checkpoint (tests/capstone)",
    "pytorch-tutor capstone serve": "a server that runs until stopped (tests/capstone)",
    "pytorch-tutor serve-ui": "a web server that runs until stopped (tests/browser drives it)",
    "pytorch-tutor serve-ui --host 0.0.0.0 --allow-remote": "a web server that runs until stopped (tests/browser)",
    "pytorch-tutor --lessons DIR serve-ui --port 9000": "a web server that runs until stopped (tests/browser)",
    "pytorch-tutor serve-ui --roster class.txt": "a web server that runs until stopped "
                                                 "(tests/browser/test_serve_access.py runs class mode)",
    "pytorch-tutor serve-ui --max-sessions 8": "a web server that runs until stopped (tests/browser/test_serve_access.py)",
    "pytorch-tutor serve-ui --allow-host tutor.example.org": "a web server that runs until stopped "
                                                             "(tests/browser/test_serve_access.py)",
    "pytorch-tutor --lessons my-pack/my_pack --watch": "opens the full-screen app (tests/ui/test_course_watch.py)",
    "pytest --lessons my-pack/my_pack": "a nested pytest run (tests/test_pytest_plugin.py runs the plugin)",
    "pytorch-tutor try 02/my-repair fix.py my-pack/my_pack": "needs a submission file written for that drill "
                                                             "(tests/test_try_submission.py runs `try`)",
    "pip install ./my-pack && pytorch-tutor --course my-pack": "installs a package into the venv, then opens the app",
    "pytorch-tutor migrate DIR --to 2": "rewrites the pack's files (tests/unit/test_migrate.py runs it on a copy)",
    "pytorch-tutor migrate DIR": "rewrites the pack's files (tests/unit/test_migrate.py runs it on a copy)",
    "sudo pytorch-tutor class watch /home/*/.local/share/pytorch-tutor/profiles/default.sqlite":
        "reads other accounts' homes as root, until stopped (tests/unit/test_class_live.py runs it with --once)",
    "pytorch-tutor class watch DIR": "refreshes until stopped (tests/unit/test_class_live.py runs it with --once)",
    "sudo pytorch-tutor class-report /home/*/.local/share/pytorch-tutor/profiles/default.sqlite":
        "reads other accounts' homes as root (tests/unit/test_class_report.py reads profiles themselves)",
}
# Commands that build on the one before (the lesson-pack walkthrough): run in order, in one directory.
SEQUENCES = (("pytorch-tutor new course my-pack", "pytorch-tutor new module my-pack/my_pack", "pytorch-tutor validate my-pack",
              "pytorch-tutor check my-pack"),)


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


# entries that also cover what follows them (flags, arguments)
_PREFIX_ENTRIES = ("python3.11 -m venv", ".venv/bin/pip install", ".venv/bin/python -m pytest", "pytorch-tutor capstone")


def skip_reason(command: str) -> str | None:
    """Why ``command`` is not run: its own entry, or an entry it extends."""
    if command in SKIPPED:
        return SKIPPED[command]
    matches = [k for k in SKIPPED if command.startswith(k + " ") and k.startswith(_PREFIX_ENTRIES)]
    return SKIPPED[max(matches, key=len)] if matches else None


def sequence_of(command: str) -> tuple[str, ...] | None:
    return next((seq for seq in SEQUENCES if any(command.startswith(step) for step in seq)), None)


def test_the_skip_list_names_only_commands_that_are_shown():
    commands = shown_commands()
    assert commands, "no commands found in the READMEs"
    stale = [k for k in SKIPPED if not any(c == k or c.startswith(k + " ") for c in commands)]
    assert not stale, f"skip entries that match no shown command: {stale}"
    stale_steps = [step for seq in SEQUENCES for step in seq if not any(c.startswith(step) for c in commands)]
    assert not stale_steps, f"sequence steps that match no shown command: {stale_steps}"


def _filled(command: str, tmp_path: Path, mini_course_dir: Path) -> list[str]:
    snippet = tmp_path / "snippet.py"
    snippet.write_text("import torch\nx = torch.ones(2, 3)\n")
    words = shlex.split(command)
    out = []
    for word in words[1:]:  # the program name
        if word.startswith("lessons/"):  # the READMEs' paths are from the checkout
            out.append(str(ROOT / word))
        elif "*" in word:  # the shell's glob, over a profile export made here
            (tmp_path / "exports").mkdir(exist_ok=True)
            if not any((tmp_path / "exports").iterdir()):
                assert main(["profile", "export", str(tmp_path / "exports" / "learner.json")]) == 0
            out.extend(sorted(str(p) for p in tmp_path.glob(word)))
        elif word == "FILE":
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


def _run(command: str, tmp_path: Path, mini_course_dir: Path, capsys) -> None:
    assert command.startswith("pytorch-tutor "), f"{command!r}: not a pytorch-tutor command; run it or skip it"
    status = main(_filled(command, tmp_path, mini_course_dir))
    captured = capsys.readouterr()
    assert status == 0, f"{command!r} exited {status}:\n{captured.out[-2000:]}\n{captured.err[-2000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("command", [c for c in shown_commands() if skip_reason(c) is None and not sequence_of(c)])
def test_a_shown_command_succeeds(command, tmp_path, mini_course_dir, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # what a command writes (r.html, my-pack/) lands here
    _run(command, tmp_path, mini_course_dir, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("steps", SEQUENCES, ids=lambda seq: seq[0])
def test_a_shown_walkthrough_succeeds_in_order(steps, tmp_path, mini_course_dir, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    commands = shown_commands()
    for step in steps:
        for command in [c for c in commands if c.startswith(step) and skip_reason(c) is None]:
            _run(command, tmp_path, mini_course_dir, capsys)
