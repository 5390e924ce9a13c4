"""`pytorch-tutor capstone ... --package mine`: the commands on the learner's own stage files, in the sandbox.

Real runs (tier 1 only: the sandbox must mount the workspace for the run to write): a
workspace whose stage files are the reference's own copies trains bit for bit like the
reference package, a broken stage file fails with one line naming the stage, and the summary
says whose code each stage was. The learner's files are never imported by the test's process.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from capstone.tiny import tiny_workspace
from tutor.cli import main as tutor_main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--steps", "12", "--context", "32", "--d-model", "32", "--n-layer", "1", "--n-head", "2",
        "--batch-size", "4", "--log-every", "4", "--eval-every", "0", "--threads", "1"]
PROFILE = "learner"


@pytest.fixture(scope="module")
def tier1():
    from tutor.sandbox.client import Sandbox
    from tutor.sandbox.wire import Tier

    box = Sandbox()
    try:
        if box.choose_tier() != Tier.NAMESPACES:
            pytest.skip("--package mine needs tier 1 (the sandbox mounts the workspace)")
    finally:
        box.close_sync()


def write_stage(module_id: str, lab_id: str, text: str) -> Path:
    from tutor.course.loader import load_course
    from tutor.locations import builtin_course_dir
    from tutor.workspace import exercise_path

    course = load_course(builtin_course_dir())
    module = {m.id: m for m in course.modules()}[module_id]
    path = exercise_path(space(), module_id, module.drill(lab_id))
    path.write_text(text, encoding="utf-8")
    return path


def space():
    from tutor.course.loader import load_course
    from tutor.locations import builtin_course_dir
    from tutor.workspace import Workspace

    return Workspace(PROFILE, load_course(builtin_course_dir()).identity)


def capstone(*argv: str) -> int:
    return tutor_main(["--profile", PROFILE, "capstone", *argv])


def weights(ws: Path) -> dict:
    return torch.load(ws / "train" / "ckpt.pt", weights_only=True)["model"]


def test_the_reference_copies_train_bit_for_bit_like_the_reference(tier1, tmp_path, capsys):
    write_stage("32", "build-the-gpt", (ROOT / "capstone" / "model.py").read_text(encoding="utf-8"))
    mine, reference = tiny_workspace(tmp_path / "mine", train=False), tiny_workspace(tmp_path / "ref", train=False)

    assert capstone("train", "--package", "mine", "--workspace", str(mine.root), *TINY) == 0
    out, err = capsys.readouterr()
    assert "train: step 12/12 finished" in out
    assert f"wrote {mine.root.resolve()}/train/ckpt.pt" in out      # the host's path, not the sandbox's
    assert "model: your 32_build_the_gpt.py" in err and "train: the reference" in err
    assert "Traceback" not in out + err

    assert capstone("train", "--workspace", str(reference.root), *TINY) == 0
    a, b = weights(mine.root), weights(reference.root)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)

    assert capstone("eval", "--package", "mine", "--stride", "16", "--workspace", str(mine.root)) == 0
    out, err = capsys.readouterr()
    assert "nats/token" in out and "model: your 32_build_the_gpt.py" in err
    assert "your package" in out and "the course                 2.946   3.669             0.723" in out


def test_a_broken_stage_file_fails_in_one_line_that_names_it(tier1, tmp_path, capsys):
    model = (ROOT / "capstone" / "model.py").read_text(encoding="utf-8")
    ws = tiny_workspace(tmp_path / "ws", train=False)
    write_stage("32", "build-the-gpt", model.replace("        x = x + self.mlp(self.ln_2(x))\n",
                                                     "        x = x + self.mlp(self.ln_2(x)) + nonsense\n"))
    assert capstone("train", "--package", "mine", "--workspace", str(ws.root), *TINY) == 1
    out, err = capsys.readouterr()
    assert "your model.py (stage 4, 32/build-the-gpt)" in err and "NameError" in err and "in forward" in err
    assert "Traceback" not in out + err

    # a def the command calls, redefined with other parameters: the TypeError is raised before any line
    # of the learner's runs (no frame of theirs), so the def itself is named, with how the command calls it
    write_stage("32", "build-the-gpt", model.replace("class GPT(nn.Module):\n    def __init__(self, config: GPTConfig):",
                                                     "class GPT(nn.Module):\n    def __init__(self, config: GPTConfig, vocab):"))
    assert capstone("train", "--package", "mine", "--workspace", str(ws.root), *TINY) == 1
    err = capsys.readouterr().err
    assert "your model.py (stage 4, 32/build-the-gpt), line" in err and "in GPT.__init__: TypeError: GPT.__init__()" \
        in err and "(the command calls it as the reference defines it: GPT.__init__(self, config))" in err, err

    write_stage("32", "build-the-gpt", model + "\ndef unfinished(:\n")
    assert capstone("train", "--package", "mine", "--workspace", str(ws.root), *TINY) == 1
    err = capsys.readouterr().err
    assert "your model.py (stage 4, 32/build-the-gpt), line" in err and "SyntaxError" in err
    assert "Traceback" not in err and not (ws.root / "train" / "ckpt.pt").exists()


def test_a_stage_file_that_runs_its_reference_read_from_disk_gets_no_further_than_the_read(tier1, tmp_path, capsys):
    """No import statement for the text rule to refuse: the file execs capstone/model.py's text. The run hides
    the package's own files of the stages that are the learner's, so the read fails and nothing trains."""
    ws = tiny_workspace(tmp_path / "ws", train=False)
    write_stage("32", "build-the-gpt", "import capstone, os\n"
                                       "with open(os.path.join(capstone.__path__[0], 'model.py')) as _f:\n"
                                       "    exec(compile(_f.read(), 'model.py', 'exec'))\n")
    assert capstone("train", "--package", "mine", "--workspace", str(ws.root), *TINY) == 1
    out, err = capsys.readouterr()
    assert "your model.py (stage 4, 32/build-the-gpt)" in err and "PermissionError" in err, err
    assert not (ws.root / "train" / "ckpt.pt").exists()


def test_a_stage_file_that_imports_its_reference_is_refused_before_any_run(tmp_path, capsys):
    # `--package mine` would run the reference and call it the learner's: refused by the lab's own import
    # rules, checked on the file's text (no sandbox starts, nothing of the learner's is imported)
    ws = tiny_workspace(tmp_path / "ws", train=False)
    write_stage("32", "build-the-gpt", "from capstone.model import *  # mine, honestly\n")
    assert capstone("train", "--package", "mine", "--workspace", str(ws.root), *TINY) == 2
    out, err = capsys.readouterr()
    assert ("your model.py (stage 4, 32/build-the-gpt) imports the reference, so it would run the reference as "
            "yours: line 1: rule forbid_modules: `capstone.model` may not be imported in this lab") in err, err
    assert "write the stage yourself, or switch it to the reference" in err
    assert "Traceback" not in out + err and not (ws.root / "train").exists()

    # the same stage by a computed name: the lab forbids importlib, and so does --package mine
    write_stage("32", "build-the-gpt", (ROOT / "capstone" / "model.py").read_text(encoding="utf-8"))
    write_stage("30", "write-bpe", 'import importlib\nglobals().update(vars(importlib.import_module("cap" + "stone.bpe")))\n')
    assert capstone("train", "--package", "mine", "--workspace", str(ws.root), *TINY) == 2
    err = capsys.readouterr().err
    assert "your bpe.py (stage 2, 30/write-bpe) imports the reference" in err and "`importlib` may not be used" in err
    assert "model.py" not in err  # the honest stage is not blamed


def test_a_stage_switched_to_its_reference_runs_the_reference(tier1, tmp_path, capsys):
    from tutor.workspace import use_reference

    write_stage("32", "build-the-gpt", "raise SystemExit('never imported')\n")
    use_reference(space(), "32", "build-the-gpt")
    ws = tiny_workspace(tmp_path / "ws", train=False)
    assert capstone("train", "--package", "mine", "--workspace", str(ws.root), *TINY) == 0
    err = capsys.readouterr().err
    assert "model: the reference for 32/build-the-gpt (you switched to it)" in err


def test_serve_over_http_is_refused_and_corpus_says_it_is_the_reference(tmp_path, capsys):
    assert capstone("serve", "--package", "mine", "--workspace", str(tmp_path)) == 2
    assert "--terminal" in capsys.readouterr().err
    corpus_file = tmp_path / "c.txt"
    corpus_file.write_text("a small corpus\n" * 200, encoding="utf-8")
    assert capstone("corpus", "--package", "mine", "--corpus", str(corpus_file), "--workspace", str(tmp_path / "w")) == 0
    assert "runs the reference" in capsys.readouterr().err


def test_the_cli_process_never_imports_a_learner_file(tier1, tmp_path):
    import subprocess

    write_stage("32", "build-the-gpt", (ROOT / "capstone" / "model.py").read_text(encoding="utf-8")
                + "\nimport os\nopen(os.environ.get('MARK', '/nonexistent/x'), 'w').write('imported')\n")
    ws = tiny_workspace(tmp_path / "ws", train=False)
    mark = tmp_path / "imported-on-the-host"
    import os

    env = dict(os.environ, MARK=str(mark))
    done = subprocess.run([sys.executable, "-m", "tutor", "--profile", PROFILE, "capstone", "train", "--package",
                           "mine", "--workspace", str(ws.root), *TINY], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    # inside the sandbox MARK is not set and the host path is not visible: the write fails there
    assert not mark.exists()
    assert "your model.py (stage 4, 32/build-the-gpt)" in done.stderr and "Traceback" not in done.stderr


def test_ctrl_c_stops_the_sandboxed_run_with_a_checkpoint_that_resumes(tier1, tmp_path, capsys, monkeypatch):
    import re
    import signal

    from capstone.progress import ProgressFollower

    write_stage("32", "build-the-gpt", (ROOT / "capstone" / "model.py").read_text(encoding="utf-8"))
    ws = tiny_workspace(tmp_path / "ws", train=False)
    poll = ProgressFollower.poll

    def ctrl_c_once_step_5_is_shown(self):
        poll(self)
        if self.bar is not None and self.bar.step >= 5 and not getattr(self, "interrupted", False):
            self.interrupted = True
            signal.raise_signal(signal.SIGINT)  # Ctrl-C reaches the tutor's process, never the sandbox's

    monkeypatch.setattr(ProgressFollower, "poll", ctrl_c_once_step_5_is_shown)
    long = [a if a != "12" else "1000" for a in TINY]
    assert capstone("train", "--package", "mine", "--workspace", str(ws.root), *long) == 130
    err = capsys.readouterr().err
    stopped = int(re.search(r"interrupted at step (\d+)/1000", err).group(1))
    assert 5 <= stopped < 1000
    assert f"train --resume --package mine --workspace {ws.root.resolve()}" in err and "Traceback" not in err
    assert torch.load(ws.checkpoint, weights_only=True)["step"] == stopped
    monkeypatch.undo()

    assert capstone("train", "--resume", "--threads", "1", "--package", "mine", "--workspace", str(ws.root)) == 0
    assert "step 1000/1000 finished" in capsys.readouterr().out


def test_what_a_stage_lab_does_not_ask_for_comes_from_the_reference(tier1, tmp_path, capsys):
    # write-lora asks for the adapter, not the fine-tuning loop: a learner's lora.py without it still fine-tunes
    lora = (ROOT / "capstone" / "lora.py").read_text(encoding="utf-8")
    write_stage("36", "write-lora", lora[:lora.index("def mean_nll(")])
    ws = tiny_workspace(tmp_path / "ws")
    assert capstone("finetune", "--package", "mine", "--steps", "3", "--batch-size", "2", "--workspace", str(ws.root)) == 0
    out, err = capsys.readouterr()
    assert "fine-tuned 3 steps" in out and "lora: your 36_write_lora.py" in err
    # ... and the summary says whose code that part was
    assert ("(with the reference's mean_nll, FineTuner, finetune, finetune_workspace, apply_lora_tensors, "
            "apply_adapter, load_adapted, which its lab gives)") in err


def test_a_sandboxed_finetune_stops_and_resumes_like_the_reference(tier1, tmp_path, capsys):
    write_stage("36", "write-lora", (ROOT / "capstone" / "lora.py").read_text(encoding="utf-8"))
    mine, reference = tiny_workspace(tmp_path / "mine"), tiny_workspace(tmp_path / "ref")
    tune = ["finetune", "--steps", "6", "--batch-size", "2", "--threads", "1"]
    assert capstone(*tune, "--stop-after", "2", "--package", "mine", "--workspace", str(mine.root)) == 0
    err = capsys.readouterr().err
    assert f"finetune --resume --package mine --workspace {mine.root.resolve()}" in err
    assert capstone("finetune", "--resume", "--threads", "1", "--package", "mine", "--workspace", str(mine.root)) == 0
    assert "fine-tuned 6 steps" in capsys.readouterr().out
    assert capstone(*tune, "--workspace", str(reference.root)) == 0
    a, b = (torch.load(ws.root / "finetune" / "ckpt.pt", weights_only=True)["lora"] for ws in (mine, reference))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_a_model_without_the_cache_yet_refuses_it_by_name_and_samples_without_it(tier1, tmp_path, capsys):
    # module 32 done, module 35 not yet: the starter's two lines refuse a cache instead of ignoring it
    model = (ROOT / "capstone" / "model.py").read_text(encoding="utf-8")
    hook = "        B, T = idx.shape\n"
    assert model.count(hook) == 1
    write_stage("32", "build-the-gpt", model.replace(hook, hook.replace("B, T = idx.shape", (
        "if kv_cache is not None:\n            raise NotImplementedError(\"GPT.forward with a kv_cache: module 35's lab; "
        "until then `--no-cache`\")\n        B, T = idx.shape"))))
    ws = tiny_workspace(tmp_path / "ws")
    assert capstone("sample", "--package", "mine", "--tokens", "5", "--workspace", str(ws.root)) == 1
    err = capsys.readouterr().err
    assert "your model.py (stage 4, 32/build-the-gpt), line" in err and "module 35's lab; until then `--no-cache`" in err
    assert capstone("sample", "--package", "mine", "--tokens", "5", "--no-cache", "--workspace", str(ws.root)) == 0
