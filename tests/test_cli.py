"""The command line, driven as a user would: exit codes and what is printed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tutor.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_validate_the_builtin_course(capsys):
    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    assert "38 modules in the course" in out and "validate: ok" in out


def test_validate_reports_file_line_column(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text('format_version: 1\nmodule: "01"\ndrills:\n  - id: a\n    prompt: [unclosed\n')
    assert main(["validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:" in out and "invalid YAML" in out


def test_validate_missing_path(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope")]) == 1
    assert "no such file or directory" in capsys.readouterr().out


@pytest.mark.slow
def test_run_prints_what_it_observed(tmp_path, capsys):
    snippet = tmp_path / "s.py"
    snippet.write_text("import torch\nx = torch.ones(2, 3)\ny = x.t()\nprint('hello')\n")
    assert main(["run", str(snippet)]) == 0
    out = capsys.readouterr().out
    assert "hello" in out
    assert "y = tensor (3, 2) torch.float32 stride (1, 3)" in out and "shares storage with x" in out
    assert out.rstrip().endswith("-- verdict: ok")


@pytest.mark.slow
def test_run_trace_prints_every_tensor_after_every_line(tmp_path, capsys):
    snippet = tmp_path / "s.py"
    snippet.write_text("import torch\nx = torch.ones(2, 3)\ny = x.t()\ny.mul_(2)\n"
                       "def f(a):\n    b = a.sum()\n    return b\nz = f(y)\nw = 1 / 0\n")
    assert main(["run", "--trace", "--function", "f", str(snippet)]) == 1
    out = capsys.readouterr().out
    trace = out[out.index("Trace ("):]
    assert "  line 3        y: shape [3, 2]  dtype float32  stride (1, 3)  offset 0  shares x  version 0" in trace
    assert "  line 4        x: shape [2, 3]  dtype float32  stride (3, 1)  offset 0  shares y*  version 1*" in trace
    assert "  line 6 in f   a: shape [3, 2]" in trace and "  line 8        z: shape []" in trace
    assert "ZeroDivisionError: division by zero (line 9 of the code)" in out
    assert main(["run", "--function", "f", str(snippet)]) == 2
    assert "--function goes with --trace" in capsys.readouterr().out


@pytest.mark.slow
def test_run_view_prints_each_view_asked_for_after_the_run(tmp_path, capsys):
    snippet = tmp_path / "s.py"
    snippet.write_text("import torch\nx = torch.arange(6.).reshape(2, 3)\nt = x.t()\n"
                       "w = torch.ones(3, requires_grad=True)\nloss = (x @ w).sum()\n")
    assert main(["run", str(snippet), "--view", "storage", "t", "--view", "graph", "loss"]) == 0
    out = capsys.readouterr().out
    views = out[out.index("-- views"):]
    assert "Storage under t: 6 cells of float32 (4 bytes each); also reached by x." in views
    assert "Index rule: t[1, 1] is at cell offset + i·stride₀ + j·stride₁ = 0 + 1·1 + 1·3 = 4" in views
    assert "Autograd graph from loss:" in views and "AccumulateGrad: leaf w (3,)" in views
    assert views.index("Storage under t") < views.index("Autograd graph") < views.index("-- verdict: ok")
    assert main(["run", str(snippet), "--view", "module", "t"]) == 0  # a view of the wrong kind says so
    assert "View of registered model of t:" in capsys.readouterr().out


def test_run_view_refuses_what_it_cannot_read_before_running(tmp_path, capsys):
    snippet = tmp_path / "s.py"
    snippet.write_text("x = 1\n")
    assert main(["run", str(snippet), "--view", "picture", "x"]) == 2
    assert "--view picture x: Type a view and a name" in capsys.readouterr().out
    assert main(["run", str(snippet), "--view", "graph", "1bad"]) == 2
    assert "'1bad' is not a name the code binds" in capsys.readouterr().out
    assert main(["run", str(snippet), "--view", "storage", "a", "b"]) == 2


@pytest.mark.slow
def test_run_reports_errors_fence_rules_and_crashes(tmp_path, capsys):
    snippet = tmp_path / "s.py"
    snippet.write_text("import torch\ntorch.set_grad_enabled(False)\n")
    assert main(["run", str(snippet)]) == 1
    assert "fence rule broken: the grad mode changed from True to False" in capsys.readouterr().out
    snippet.write_text("import os\nos.abort()\n")
    assert main(["run", str(snippet)]) == 1
    assert "killed by SIGABRT" in capsys.readouterr().out
    snippet.write_text("x = 1 / 0\n")
    assert main(["run", str(snippet)]) == 1
    assert "ZeroDivisionError: division by zero (line 1 of the code)" in capsys.readouterr().out


@pytest.mark.slow
def test_check_passes_a_good_course_and_fails_a_false_claim(tmp_path, mini_course_dir, capsys):
    assert main(["check", str(mini_course_dir), "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "check: ok — 6 drills" in out and "slowest:" in out
    module = tmp_path / "m.yaml"
    text = (mini_course_dir / "01_first.yaml").read_text()
    # a "wrong" answer that is in fact right must be caught
    module.write_text(text.replace('answer: "(3, 1)"', 'answer: "(1, 3)"'))
    assert main(["check", str(module), "--drill", "transpose-strides"]) == 1
    out = capsys.readouterr().out
    assert "wrong answer '(1, 3)' for 'y.stride()' is accepted" in out


def test_progress_table(capsys):
    assert main(["--profile", "learner-1", "progress"]) == 0
    out = capsys.readouterr().out
    from tutor.course.loader import load_course
    from tutor.locations import builtin_course_dir

    written = len(load_course(builtin_course_dir()).modules())
    assert "Profile 'learner-1'" in out and f"0 of {written} written modules done" in out
    assert main(["--profile", "../etc", "progress"]) == 2


def test_progress_of_another_course_runs_none_of_its_code(tmp_path, mini_course_dir, capsys, monkeypatch):
    # read-only: it opens the course and profile the one way (startup), without the confinement refusal
    import tutor.sandbox.client as client

    monkeypatch.setattr(client, "third_party_refusal", lambda *a: "this machine cannot confine them")
    assert main(["--lessons", str(mini_course_dir), "progress"]) == 0
    assert "0 of 3 written modules done" in capsys.readouterr().out
    assert main(["--lessons", str(tmp_path), "progress"]) == 2
    assert "has no course.yaml" in capsys.readouterr().err


def test_console_script_help():
    exe = Path(sys.executable).with_name("pytorch-tutor")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "tutor"]
    out = subprocess.run(command + ["--help"], capture_output=True, text=True, check=True).stdout
    for sub in ("validate", "check", "run", "progress", "doctor", "capstone"):
        assert sub in out


THREAD_BOUND = """format_version: 1
module: "01"
intro: One drill whose answer is this machine's, one that holds anywhere.
drills:
  - id: thread-count
    prompt: How many intra-op threads does torch use here?
    setup: import torch
    code: n = torch.get_num_threads()
    ask:
      - {expr: n, kind: int}
    explanation: It is this machine's setting, which is why a drill must not ask it.
    hints: [Count the cores.]
    wrong_answers:
      - {answer: "0", misconception: torch runs without threads}
  - id: sum-dtype
    prompt: What dtype does summing an int tensor give?
    setup: import torch
    code: s = torch.tensor([1, 2, 3]).sum()
    ask:
      - {expr: s.dtype, kind: dtype}
    explanation: Integer sums accumulate in int64.
    hints: [Think about overflow.]
    wrong_answers:
      - {expr: s.dtype, answer: float32, misconception: sums become floats}
"""


@pytest.mark.slow
def test_check_under_two_settings_reports_the_drill_whose_answer_moved(tmp_path, capsys):
    module = tmp_path / "m.yaml"
    module.write_text(THREAD_BOUND)
    assert main(["check", str(module), "--setting", "default/1", "--setting", "default/3"]) == 1
    out = capsys.readouterr().out
    assert "== under default/1: ATEN_CPU_CAPABILITY=default, 1 intra-op thread" in out
    assert "MOVED 01/thread-count\n  default/1 -> default/3: n: 1 -> 3" in out
    assert "MOVED 01/sum-dtype" not in out
    assert "1 drill decided differently between settings" in out
    # each setting alone: both drills hold
    assert main(["check", str(module), "--setting", "default/3"]) == 0


def test_check_refuses_a_setting_it_cannot_read_or_this_cpu_cannot_run(tmp_path, capsys, monkeypatch):
    from tutor.sandbox import kernel_settings

    module = tmp_path / "m.yaml"
    module.write_text(THREAD_BOUND)
    assert main(["check", str(module), "--setting", "sse9"]) == 2
    assert "the capability is one of machine, default, avx2, avx512" in capsys.readouterr().err
    assert main(["check", str(module), "--setting", "default/0"]) == 2
    assert "the thread count is a whole number from 1 to 64" in capsys.readouterr().err
    monkeypatch.setattr(kernel_settings, "cpu_flags", lambda: frozenset({"sse2", "avx2", "fma"}))
    assert main(["check", str(module), "--setting", "avx512/1"]) == 2  # never a SIGILL in the sandbox
    assert "this CPU lacks avx512bw, avx512dq, avx512f, avx512vl" in capsys.readouterr().out


def test_allow_grants_and_trust_lessons_are_read_after_the_command_name_too():
    from tutor.cli import _parser

    for command in (["check", "DIR"], ["try", "01/x", "f.py", "DIR"], ["interview"], ["serve-ui"]):
        after = _parser().parse_args(command + ["--allow-grants", "--trust-lessons"])
        before = _parser().parse_args(["--allow-grants", "--trust-lessons"] + command)
        neither = _parser().parse_args(command)
        assert after.allow_grants and after.trust_lessons, command
        assert before.allow_grants and before.trust_lessons, command
        assert not neither.allow_grants and not neither.trust_lessons, command
