"""torch.compile (Inductor's C++ backend) under ``needs: [exec]``, and the course's compile cache (issue 20, item 8).

Tier 1 only (the one tier that grants exec); the compiles are real, so the module
shares one sandbox and one cache. No timings are asserted: that the second compile is
served by the cache is read from Inductor's own counters (the speed is measured in
``benchmarks/bench_sandbox.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tutor.sandbox.client import Sandbox, run_sync
from tutor.sandbox.inner.compile_cache import TARGET, CompileCache
from tutor.sandbox.wire import RunRequest

pytestmark = pytest.mark.slow

COMPILE = """
import os, torch
from torch._dynamo.utils import counters
def f(x, w):
    return torch.tanh(x @ w).sin().sum(dim=1) * 2 + 1
w = torch.randn(8, 8)
x = torch.randn(16, 8)
torch._dynamo.reset()
counters.clear()
close = bool(torch.allclose(torch.compile(f)(x, w), f(x, w), atol=1e-5))
hits = counters["inductor"]["fxgraph_cache_hit"]
misses = counters["inductor"]["fxgraph_cache_miss"]
cache_dir = os.environ["TORCHINDUCTOR_CACHE_DIR"]
"""
SEES_CACHE = f"import os\nsees = os.path.isdir({TARGET!r})\nwritable = sees and os.access({TARGET!r}, os.W_OK)"


@pytest.fixture(scope="module")
def compiling(tmp_path_factory):
    cache = tmp_path_factory.mktemp("compile-cache")
    box = Sandbox(compile_cache=cache, warm_compile=True)
    box.start_sync()
    if box.tier_level != "1":
        box.close_sync()
        pytest.skip("only tier 1 grants exec")
    yield box, cache
    box.close_sync()


def values(result, *names):
    assert result.ok, result.message
    obs = result.observation
    assert obs.error is None, obs.error
    return [obs.variables[n].get("value") for n in names]


def test_inductor_compiles_by_default_and_the_second_compile_comes_from_the_cache(compiling):
    box, cache = compiling
    first = run_sync(RunRequest(code=COMPILE, needs=("exec",), timeout=240), box)
    close, misses, cache_dir = values(first, "close", "misses", "cache_dir")
    assert close and misses >= 1 and cache_dir == TARGET
    assert any(files for _, _, files in os.walk(cache)), "nothing was kept in the course's cache"
    second = run_sync(RunRequest(code=COMPILE, needs=("exec",), timeout=240), box)
    close, hits, misses = values(second, "close", "hits", "misses")
    assert close and hits >= 1 and misses == 0


def test_only_the_learner_side_of_a_run_granted_exec_sees_the_cache(compiling):
    box, _ = compiling
    plain = run_sync(RunRequest(code=SEES_CACHE), box)
    assert values(plain, "sees") == [False]
    granted = run_sync(RunRequest(code=SEES_CACHE, needs=("exec",)), box)
    assert values(granted, "sees", "writable") == [True, True]
    # a judged run: the learner's half has it, the judge's half (where the check runs) does not
    judged = run_sync(RunRequest(code=SEES_CACHE, needs=("exec",), judged=True,
                                 check=f"import os\nassert sees\nassert not os.path.exists({TARGET!r}), 'judge sees it'"),
                      box)
    assert judged.ok and judged.observation.check == "passed", judged.observation.check_text


# A run that writes a kernel NAME into the cache as Inductor does (in place), then does THEN.
WRITE_KERNEL = f"""
import os, time
path = os.path.join({TARGET!r}, "kernels", NAME)
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "wb") as f:
    f.write(b"\\x7fELF" * 1024)
THEN
"""


def test_a_run_stopped_mid_compile_leaves_none_of_its_writes_in_the_cache(compiling):
    """A kernel half written when the run was killed must not be loaded by the next compile (observed: a
    0-byte .so, then "ImportError: file too short" on every later compile of that graph)."""
    box, cache = compiling
    # a finished run's kernel stays (dated back: it was written before the stopped run began)
    finished = run_sync(RunRequest(code=WRITE_KERNEL.replace("NAME", "'kept.so'").replace(
        "THEN", "os.utime(path, (time.time() - 60, time.time() - 60))\nwritten = True"), needs=("exec",)), box)
    assert values(finished, "written") == [True]
    stopped = run_sync(RunRequest(code=WRITE_KERNEL.replace("NAME", "'half.so'").replace("THEN", "time.sleep(120)"),
                                  needs=("exec",), timeout=1), box)
    assert stopped.status == "timeout", stopped.message
    kernels = sorted(os.listdir(Path(cache, "kernels")))
    assert kernels == ["kept.so"], kernels
    # the same run ending cleanly keeps what it wrote
    clean = run_sync(RunRequest(code=WRITE_KERNEL.replace("NAME", "'whole.so'").replace("THEN", "written = True"),
                                needs=("exec",)), box)
    assert values(clean, "written") == [True]
    assert sorted(os.listdir(Path(cache, "kernels"))) == ["kept.so", "whole.so"]


def test_each_course_has_its_own_cache(tmp_path, monkeypatch):
    from tutor.locations import HOME_ENV, compile_cache_dir

    monkeypatch.setenv(HOME_ENV, str(tmp_path))
    one, other = compile_cache_dir(tmp_path / "course-a"), compile_cache_dir(tmp_path / "course-b")
    assert one != other and one.parent == other.parent == tmp_path / "compile-cache"
    assert compile_cache_dir(tmp_path / "course-a" / ".." / "course-a") == one


def test_pruning_keeps_the_most_recently_used_files(tmp_path):
    cache = CompileCache.open(str(tmp_path / "cache"), os.getuid(), os.getgid(), root=False)
    for i in range(6):
        path = Path(cache.path, f"k{i}.so")
        path.write_bytes(b"x" * 8192)
        os.utime(path, (1000 + i, 1000 + i))
    Path(cache.path, "half.so").write_bytes(b"")  # a kernel killed mid-link, however recent
    cache.prune(keep_bytes=3 * 8192, keep_files=100)
    assert sorted(os.listdir(cache.path)) == ["k3.so", "k4.so", "k5.so"]


HOLDS_COMPILE_MODULES = "import sys\nheld = 'torch._inductor.compile_fx' in sys.modules"


def test_a_batch_that_waits_for_the_compile_warm_runs_on_runners_that_hold_torch_compile():
    """`check` never lets the zygote idle, so it waits once for torch.compile's imports (``compile_warmed``);
    every run after that, the very first included, must find them imported (runners forked before are retired)."""
    import asyncio

    box = Sandbox(warm_compile=True)
    try:
        box.start_sync()
        if box.tier_level != "1":
            pytest.skip("only tier 1 warms torch.compile's modules (the one tier that grants exec)")
        assert asyncio.run(box.compile_warmed()) is True
        assert values(run_sync(RunRequest(code=HOLDS_COMPILE_MODULES), box), "held") == [True]
    finally:
        box.close_sync()
    cold = Sandbox()
    try:  # asked for nothing: the wait ends at once, and runs import torch.compile's modules themselves
        cold.start_sync()
        assert asyncio.run(cold.compile_warmed()) is False
        assert values(run_sync(RunRequest(code=HOLDS_COMPILE_MODULES), cold), "held") == [False]
    finally:
        cold.close_sync()
