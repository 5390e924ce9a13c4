"""Tiers, the probe, ``doctor``, the zygote's own hygiene, third-party lessons and the CLI's clean exit."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_helpers import needs_tier1, processes_with, run, var
from tutor.sandbox.client import Sandbox, probe, third_party_refusal
from tutor.sandbox.zygote_process import zygote_environment
from tutor.sandbox.wire import RunRequest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MINI_COURSE = ROOT / "tests" / "fixtures" / "mini_course"
LESSONS = ROOT / "lessons"


def cli(*args: str, python: str = sys.executable, env: dict | None = None, timeout: float = 120):
    return subprocess.run([python, "-m", "tutor", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, cwd=ROOT)


# ---------------------------------------------------------------- the probe and doctor


def test_probe_reports_what_a_tier1_run_sees(tier1_sandbox):
    seen = probe()["namespaces"]["seen"]
    assert seen["pid"] == 2 and seen["CapEff"] == "0000000000000000" and seen["Seccomp"] == "2"
    assert seen["interfaces"] == ["lo"] and seen["scratch_writable"]
    assert "home" not in seen["root_entries"]
    if os.geteuid() == 0:
        assert seen["uid"] == 65534  # never root inside


def test_probe_falls_back_to_tier2_when_namespaces_are_forbidden(forbidding_python):
    report = probe(forbidding_python)
    assert report["tier"] == "2", report
    assert "unshare" in report["namespaces"]["error"] and "not permitted" in report["namespaces"]["error"]
    assert report["tier2"]["seen"]["Seccomp"] == "2"


def test_doctor_tells_the_truth_here(tier1_sandbox):
    done = cli("doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "tier 1" in out and "chosen by the start-up probe" in out
    for layer in ("user namespace", "pid namespace", "network namespace", "mount namespace", "landlock",
                  "seccomp", "rlimits", "uid", "capabilities"):
        line = next(x for x in out.splitlines() if x.strip().startswith(layer))
        assert " on" in line or layer in ("uid", "capabilities"), line
    assert "pid 2," in out and "CapEff 0000000000000000" in out and "network interfaces: lo;" in out
    assert "can be confined" in out
    memory = next(x for x in out.splitlines() if x.strip().startswith("memory cap"))
    if "off (" in memory:  # no cgroup here: what is refused and what is left uncapped is said precisely
        assert "memfds and SysV shared memory are refused" in memory and "granted processes or exec" in memory


TIER1_VIEW = r"""
import os
pid, uid = os.getpid(), os.getuid()
with open("/proc/net/dev") as f:
    interfaces = sorted(line.split(":")[0].strip() for line in f.readlines()[2:])
processes = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
import torch
works = float(torch.ones(3).sum())
"""


def test_a_non_root_learner_gets_tier_1_where_namespaces_are_allowed(real_tier1_python, real_tier1_sandbox,
                                                                     real_tier2_uid):
    """The uid must be read before the user namespace exists: inside it, unmapped, getuid() says 65534."""
    report = probe(real_tier1_python)
    assert report["tier"] == "1" and report["euid"] == real_tier2_uid, report
    seen = report["namespaces"]["seen"]
    assert seen["pid"] == 2 and seen["uid"] == real_tier2_uid and seen["interfaces"] == ["lo"], seen
    box = real_tier1_sandbox
    assert box.tier_level == "1" and box.info["uid"] == real_tier2_uid
    result = run(box, TIER1_VIEW, timeout=20)
    assert result.ok and result.observation.error is None, (result.message, result.observation)
    assert var(result, "pid") == 2 and var(result, "uid") == real_tier2_uid
    assert var(result, "interfaces") == ["lo"] and var(result, "processes") == [1, 2]
    assert var(result, "works") == 3.0
    done = cli("doctor", python=real_tier1_python, env={"PYTORCH_TUTOR_SANDBOX_TIER": ""})
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "sandbox:  tier 1" in out and f"snippets run as your own uid {real_tier2_uid}" in out, out
    for layer in ("user namespace", "pid namespace", "network namespace", "mount namespace"):
        line = next(x for x in out.splitlines() if x.strip().startswith(layer))
        assert line.split()[-1] == "on" or " on (" in line, line
    assert f"pid 2, uid {real_tier2_uid}," in out and "network interfaces: lo;" in out, out


def test_doctor_tells_the_truth_when_namespaces_are_forbidden(forbidding_python):
    done = cli("doctor", python=forbidding_python)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "tier 2" in out and "namespaces: refused" in out and "Operation not permitted" in out
    assert "mount namespace      off" in out and "landlock             on" in out
    assert "Seccomp 2" in out and "can be confined" in out


def test_a_weak_tier_says_so_and_refuses_third_party_lessons(tmp_path):
    weak = Sandbox(tier="3")
    assert not weak.can_confine_third_party
    message = third_party_refusal([MINI_COURSE], LESSONS, trusted=False, sandbox=weak)
    assert "cannot confine" in message and "--trust-lessons" in message
    assert third_party_refusal([LESSONS], LESSONS, trusted=False, sandbox=weak) == ""  # built-in: fine
    assert third_party_refusal([MINI_COURSE], LESSONS, trusted=True, sandbox=weak) == ""  # explicit opt-in
    done = cli("check", str(MINI_COURSE), env={"PYTORCH_TUTOR_SANDBOX_TIER": "3"})
    assert done.returncode == 2 and "--trust-lessons" in done.stderr
    done = cli("--lessons", str(MINI_COURSE), env={"PYTORCH_TUTOR_SANDBOX_TIER": "3"})
    assert done.returncode == 2 and "cannot confine" in done.stderr


def test_tiers_can_be_forced_but_not_invented():
    assert Sandbox(tier="2").choose_tier() in ("2", "3")
    assert Sandbox(tier="none").choose_tier() == "none"
    with pytest.raises(ValueError):
        Sandbox(tier="0")


# ---------------------------------------------------------------- the zygote itself


def test_zygote_has_a_minimal_environment_and_one_thread(sb):
    pid = sb.info["pid"]
    with open(f"/proc/{pid}/environ", "rb") as f:
        names = {item.split(b"=", 1)[0].decode() for item in f.read().split(b"\0") if item}
    assert names - {"PWD"} <= set(zygote_environment())  # (PWD: the test's /bin/sh wrapper for tier 2)
    assert len(os.listdir(f"/proc/{pid}/task")) == 1  # no OpenBLAS or OpenMP threads to break fork


def test_children_use_two_threads_without_deadlock(sb):
    # the zygote warmed up with 1 thread; a 2-thread OpenMP region in a child must not hang
    code = ("import torch\nn = torch.get_num_threads()\nx = torch.randn(512, 512, requires_grad=True)\n"
            "(x @ x).relu().sum().backward()\ny = torch.nn.functional.conv2d(torch.randn(1, 3, 64, 64), "
            "torch.randn(8, 3, 3, 3)).sum().item()")
    result = run(sb, code, timeout=10)
    assert result.ok and result.observation.error is None
    assert var(result, "n") == sb.info["threads"]


def test_gc_freeze_keeps_children_small(sb):
    code = ("import gc\ngc.collect()\nfields = {}\nfor line in open('/proc/self/smaps_rollup'):\n"
            "    k, _, v = line.partition(':')\n    fields[k] = v.split()[0] if v.split() else ''\n"
            "private = int(fields['Private_Dirty'])")
    result = run(sb, code)
    assert result.ok and var(result, "private") < 30 * 1024, var(result, "private")  # kB; ~40 MB without freeze


def test_unknown_needs_are_refused(sb):
    result = run(sb, "x = 1", needs=("root",))
    assert result.status == "refused" and "root" in result.message


def test_cancelling_kills_the_whole_tree(tier1_sandbox):
    marker = "cncl" + secrets.token_hex(4)
    box = tier1_sandbox

    async def go() -> int:
        task = asyncio.create_task(box.run(RunRequest(
            code=f"import ctypes, os, time\nctypes.CDLL(None).prctl(15, b'{marker}', 0, 0, 0)\n"
                 "if os.fork() == 0:\n    time.sleep(60)\ntime.sleep(60)", timeout=60, needs=("processes",))))
        while not box.live:
            await asyncio.sleep(0.02)
        (group,) = box.live
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return group

    group = asyncio.run(go())
    assert not box.live
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)
    assert processes_with(marker, wait=0) == []


# ---------------------------------------------------------------- pytorch-tutor run of a hostile snippet

LEFTOVERS = r"""
import ctypes, json, os, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # child subreaper: anything the CLI leaves behind becomes ours
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
time.sleep(1.0)
left = []
for entry in os.listdir('/proc'):
    if entry.isdigit():
        try:
            stat = open(f'/proc/{entry}/stat').read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(stat[1]) == os.getpid() and stat[0] != 'Z':
            left.append(open(f'/proc/{entry}/cmdline').read().replace('\0', ' '))
print(json.dumps({"rc": done.returncode, "out": done.stdout, "err": done.stderr, "left": left}))
"""


@pytest.mark.parametrize("tier", ["auto", "forbidden"])
def test_cli_run_of_a_hostile_snippet_gives_a_verdict_and_leaves_nothing(tmp_path, tier, forbidding_python):
    marker = f"318.{secrets.randbelow(10**6):06d}"
    snippet = tmp_path / "hostile.py"
    snippet.write_text(
        "import os, subprocess, time\n"
        f"for cmd in (['sleep', '{marker}'],):\n"
        "    try:\n        subprocess.Popen(cmd, start_new_session=True)\n    except OSError:\n        pass\n"
        "try:\n    open('/tmp/pytorch-tutor-hostile-was-here', 'w')\nexcept OSError:\n    pass\n"
        "print('\\x1b[2Jspinning')\nwhile True:\n    pass\n")
    python = sys.executable if tier == "auto" else forbidding_python
    helper = tmp_path / "leftovers.py"
    helper.write_text(LEFTOVERS)
    done = subprocess.run([sys.executable, str(helper), python, "-m", "tutor", "run", str(snippet), "--timeout", "2"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    report = json.loads(done.stdout)
    assert report["rc"] == 1, report
    assert "timeout" in report["out"] and "ran longer than its 2 s limit" in report["out"]
    assert "spinning" in report["out"] and "\x1b" not in report["out"]
    assert report["left"] == [], report["left"]
    assert processes_with(marker, wait=0) == []
    assert not os.path.exists("/tmp/pytorch-tutor-hostile-was-here")
    assert not [p for p in Path("/tmp").glob("pytorch-tutor-sandbox-*") if p.stat().st_uid == os.geteuid()
                and any(str(q).endswith("hostile.py") for q in p.rglob("*"))]


# ---------------------------------------------------------------- lessons declare what they need

NEEDY = '''format_version: 1
module: "90"
drills:
  - id: workers
    prompt: Two DataLoader workers. How many batches?
    setup: import torch
    code: |
      from torch.utils.data import DataLoader, TensorDataset
      batches = list(DataLoader(TensorDataset(torch.arange(8.)), batch_size=4, num_workers=2))
    ask:
      - {expr: len(batches), kind: int}
    needs: [processes]
    explanation: Eight items in batches of four.
    hints: [Divide.]
    wrong_answers:
      - {answer: "8", misconception: one batch per item}
'''


def test_a_lesson_declares_what_it_needs_and_gets_exactly_that(sb, tmp_path):
    from tutor.course.loader import load_module_file
    from tutor.grading import request_for

    path = tmp_path / "90_needy.yaml"
    path.write_text(NEEDY)
    module, errors = load_module_file(path)
    assert not errors, errors
    request = request_for(module.drills[0])
    assert request.needs == ("processes",)
    result = asyncio.run(sb.run(request))
    if sb.tier_level == "1":
        assert result.ok and result.observation.asks["len(batches)"].value["value"] == 2, result.output
        # without the declaration the same code is refused its worker processes
        plain = asyncio.run(sb.run(RunRequest(code=request.code, setup=request.setup)))
        assert plain.ok and plain.observation.error is not None
    else:
        assert result.status == "refused" and "tier 1" in result.message
    path.write_text(NEEDY.replace("needs: [processes]", "needs: [root]"))
    module, errors = load_module_file(path)
    assert module is None and any("unknown need 'root'" in str(e) for e in errors)


def test_the_probe_does_not_settle_for_tier_2_where_namespaces_work(tmp_path):
    """A tier-1 failure must not hide behind skipped tests: if the kernel allows namespaces, use them."""
    import shutil
    import subprocess
    import sys

    if shutil.which("unshare") is None:
        pytest.skip("util-linux unshare is not installed")
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "--net",
                            "--ipc", "--uts", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("this machine refuses namespaces: tier 2 is right here")
    out = subprocess.run([sys.executable, "-m", "tutor", "doctor"], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTORCH_TUTOR_SANDBOX_TIER": ""}).stdout
    assert "sandbox:  tier 1" in out, out


@pytest.mark.parametrize("which", ["tier1", "tier2-real"])
def test_no_pth_file_runs_in_the_sandboxs_interpreters(which, request, tmp_path):
    """A package (a lesson pack) can ship a .pth whose import line runs in every interpreter of the environment:
    never in the probe's or the zygote's, which start before confinement. Its directory lines still count."""
    import site
    import sysconfig

    purelib = sysconfig.get_paths()["purelib"]
    if not os.access(purelib, os.W_OK) or purelib not in site.getsitepackages():
        pytest.skip("this environment's site-packages cannot be written here")
    import tempfile

    markers = Path(tempfile.mkdtemp(prefix="pytorch-tutor-pth-markers-"))  # reachable by a fresh uid
    os.chmod(markers, 0o777)  # the real tier 2 runs as one
    extra = Path(tempfile.mkdtemp(prefix="pytorch-tutor-pth-dir-"))
    os.chmod(extra, 0o755)
    pth = Path(purelib) / f"zz-pytorch-tutor-test-{secrets.token_hex(4)}.pth"
    pth.write_text(f"{extra}\nimport os; open(os.path.join({str(markers)!r}, str(os.getpid())), 'w').close()\n")
    try:
        python = sys.executable if which == "tier1" else request.getfixturevalue("real_tier2_python")
        subprocess.run([python, "-c", "pass"], check=True, timeout=60)  # the control: an ordinary start runs it
        control = len(list(markers.iterdir()))
        assert control >= 1
        box = Sandbox(python=python)
        try:
            if box.choose_tier() != which[4]:
                pytest.skip(f"{which} is not available here (tier {box.tier_level})")
            box.start_sync()
            result = run(box, f"import sys\nhere = {str(extra)!r} in sys.path")
        finally:
            box.close_sync()
        assert result.ok and result.observation.error is None, (result.message, result.observation)
        assert var(result, "here") is True  # the .pth's directory line was honoured, as data
        assert len(list(markers.iterdir())) == control, sorted(p.name for p in markers.iterdir())
    finally:
        pth.unlink()
        shutil.rmtree(markers)
        extra.rmdir()
