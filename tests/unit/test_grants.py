"""A third-party pack's sandbox grants need the learner's consent, once per pack, again when it asks for more."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.course.loader import load_course
from tutor.progress.store import ProfileStore
from tutor.startup import StartupError, _accept_grants

DRILL = """\
  - id: {id}
    prompt: Predict.
    setup: import torch
    code: y = torch.zeros(2)
    ask:
      - {{expr: y.shape, kind: shape}}
    explanation: zeros.
    hints: [count]
    wrong_answers:
      - {{answer: "(1,)", misconception: off by one}}
    needs: [{needs}]
"""


def pack(root: Path, needs: str) -> Path:
    root.mkdir(exist_ok=True)
    (root / "course.yaml").write_text(
        "format_version: 1\nid: grants-pack\ntitle: Pack\nparts:\n  - {id: p, title: P}\nmodules:\n"
        '  - {id: "01", part: p, requires: [], title: M, file: m.yaml}\n')
    (root / "m.yaml").write_text('format_version: 1\nmodule: "01"\ndrills:\n' + DRILL.format(id="w", needs=needs))
    return root


def never(question: str) -> bool:
    raise AssertionError(f"asked again: {question}")


def test_grants_are_asked_for_once_and_again_when_the_pack_asks_for_more(tmp_path):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    root = pack(tmp_path / "pack", "processes")
    asked = []
    with pytest.raises(StartupError) as refused:
        _accept_grants(load_course(root), store, lambda q: asked.append(q) or False, allow_grants=False)
    assert "processes" in asked[0] and "01/w" in asked[0] and "--allow-grants" in str(refused.value)
    _accept_grants(load_course(root), store, lambda q: True, allow_grants=False)
    _accept_grants(load_course(root), store, never, allow_grants=False)  # remembered
    pack(root, "processes, exec")
    asked.clear()
    _accept_grants(load_course(root), store, lambda q: asked.append(q) or True, allow_grants=False)
    assert "exec" in asked[0]
    store.close()


def test_allow_grants_answers_for_a_script_and_no_terminal_means_no(tmp_path):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    root = pack(tmp_path / "pack", "loopback")
    with pytest.raises(StartupError):
        _accept_grants(load_course(root), store, None, allow_grants=False)
    _accept_grants(load_course(root), store, None, allow_grants=True)
    _accept_grants(load_course(root), store, never, allow_grants=False)
    store.close()


def test_a_pack_without_grants_is_never_asked(tmp_path):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    root = pack(tmp_path / "pack", "")
    _accept_grants(load_course(root), store, never, allow_grants=False)
    store.close()


@pytest.mark.slow
def test_plain_mode_refuses_an_unaccepted_pack_and_check_prints_its_grants(tmp_path):
    import os
    import subprocess
    import sys

    root = pack(tmp_path / "pack", "processes")
    env = {**os.environ, "PYTORCH_TUTOR_HOME": str(tmp_path / "home")}
    run = lambda *args: subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True,
                                       input="q\n", timeout=180, env=env)
    refused = run("--plain", "--lessons", str(root))
    assert refused.returncode == 2 and "processes" in refused.stderr and "--allow-grants" in refused.stderr
    assert "Traceback" not in refused.stderr
    allowed = run("--plain", "--allow-grants", "--lessons", str(root))
    assert "Traceback" not in allowed.stderr + allowed.stdout and "--allow-grants" not in allowed.stderr
    checked = run("check", str(root))  # no terminal to ask on: refused before anything runs
    assert "grants requested" in checked.stdout and "processes" in checked.stdout and "01/w" in checked.stdout
    assert checked.returncode == 2 and "--allow-grants" in checked.stderr and "check:" not in checked.stdout
    assert "Traceback" not in checked.stderr
    checked = run("--allow-grants", "check", str(root))
    assert checked.returncode == 0 and "check: ok" in checked.stdout, checked.stdout + checked.stderr


@pytest.mark.slow
def test_pytest_lessons_lists_a_packs_grants_and_runs_it_only_with_allow_grants(tmp_path):
    import os
    import subprocess
    import sys

    root = pack(tmp_path / "pack", "exec, loopback")
    env = {**os.environ, "PYTORCH_TUTOR_HOME": str(tmp_path / "home")}
    run = lambda *args: subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--lessons",
                                        str(root), *args], capture_output=True, text=True, timeout=300, env=env,
                                       cwd=tmp_path, stdin=subprocess.DEVNULL)
    refused = run("-q")
    shown = refused.stdout + refused.stderr
    assert refused.returncode == 4, shown  # a usage error: nothing collected, nothing ran
    assert "exec: run programs" in shown and "loopback" in shown and "01/w" in shown and "--allow-grants" in shown
    assert "Traceback" not in shown and "passed" not in shown
    allowed = run("--allow-grants", "-q")
    shown = allowed.stdout + allowed.stderr
    assert allowed.returncode == 0 and "1 passed" in shown, shown
    assert "grants requested by the lessons" in shown and "exec: run programs" in shown
