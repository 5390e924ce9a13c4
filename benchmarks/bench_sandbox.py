"""Benchmark: Run → observation through the sandbox, warm versus cold, and compute inside versus outside.

A script, not a timed test (load from other users of the machine moves the numbers).

* warm: one zygote, a trivial built-in drill (lessons/01, first drill) run many times, timed from
  the call to ``Sandbox.run`` until the parsed, validated observation is back. Measured with the
  isolation this machine gets (tier 1 here: all layers) and with none (``tier="none"``), each both
  at a learner's pace (a pause between runs, so a pre-forked runner is ready) and back to back;
  plus full isolation with the pre-forked pool switched off (every run forks on demand).
* cold: a fresh sandbox per run, as the first Run after launch sees it: the zygote's start
  (``python -I -m tutor.sandbox.inner``: import torch, warm up, pre-fork) and that one run.
* compute: the same 20-step MLP training loop inside the sandbox and in this process, in
  alternating rounds, timing only the loop; the losses must match.

* compile: lessons/23's Inductor drill under ``needs: [exec]``, first with the course's compile
  cache empty (g++ runs), then warm (issue 20 item 8: warm ≤ 5 s).

Targets (issue 3): warm p50 ≤ 35 ms with full isolation (≤ 15 ms without), ≥ 35× faster than
cold; compute inside within 5 % of outside.

    .venv/bin/python benchmarks/bench_sandbox.py [--runs 60] [--cold 5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.course.loader import load_course  # noqa: E402
from tutor.grading import request_for  # noqa: E402
from tutor.sandbox.client import Sandbox  # noqa: E402
from tutor.sandbox.wire import RunRequest  # noqa: E402

TRAIN = """
import time, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(512, 256)
y = torch.randint(0, 10, (512,))
started = time.perf_counter()
for step in range(20):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
seconds = time.perf_counter() - started
final = round(loss.item(), 5)
"""


COMPILE = """
import torch
def f(x, w):
    return torch.tanh(x @ w).sin().sum(dim=1) * 2 + 1
w = torch.randn(8, 8, requires_grad=True)
xs = [torch.randn(16, 8) for _ in range(3)]
torch._dynamo.reset()
outs = [torch.compile(f)(x, w) for x in xs]
"""


def compile_runs(rounds: int) -> tuple[list[float], list[float]]:
    """lessons/23's Inductor drill as a run sees it: with the course's compile cache empty, then warm.

    Each round uses a fresh cache directory and a fresh sandbox whose zygote has imported
    torch.compile's modules (``warm_compile``); each time is Run → observation.
    """
    import tempfile

    colds, warms = [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="bench-compile-cache-") as cache:
            box = Sandbox(compile_cache=cache, warm_compile=True)
            box.start_sync()
            while not box.info.get("compile_warm"):  # the zygote reports when its late imports are done
                time.sleep(0.1)
            for times in (colds, warms):
                started = time.perf_counter()
                result = asyncio.run(box.run(RunRequest(code=COMPILE, needs=("exec",), timeout=240)))
                times.append((time.perf_counter() - started) * 1000)
                assert result.ok and result.observation.error is None, result.message or result.observation.error
            box.close_sync()
    return colds, warms


def trivial_request() -> RunRequest:
    course = load_course(ROOT / "lessons")
    module = course.modules()[0]
    return request_for(module.drills[0])


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def warm(box: Sandbox, request: RunRequest, runs: int, pause: float) -> list[float]:
    for _ in range(5):  # let the pool fill and the caches settle
        await box.run(request)
        await asyncio.sleep(0.2)
    times = []
    for _ in range(runs):
        if pause:
            await asyncio.sleep(pause)
        started = time.perf_counter()
        result = await box.run(request)
        times.append((time.perf_counter() - started) * 1000)
        assert result.ok, result.message
    return times


def cold(request: RunRequest, runs: int) -> tuple[list[float], list[float]]:
    """A fresh sandbox each time: the zygote's start (probe cached, torch imported and warmed), then the first run."""
    starts, firsts = [], []
    for _ in range(runs):
        box = Sandbox()
        started = time.perf_counter()
        box.start_sync()
        ready = time.perf_counter()
        result = asyncio.run(box.run(request))
        done = time.perf_counter()
        assert result.ok, result.message
        starts.append((ready - started) * 1000)
        firsts.append((done - started) * 1000)
        box.close_sync()
    return starts, firsts


def show(label: str, times: list[float]) -> float:
    p50, p90 = pct(times, 0.5), pct(times, 0.9)
    print(f"  {label:<44} p50 {p50:7.1f} ms   p90 {p90:7.1f} ms   (n={len(times)})")
    return p50


def train_inside(box: Sandbox) -> tuple[float, float]:
    result = asyncio.run(box.run(RunRequest(code=TRAIN, timeout=60)))
    assert result.ok and result.observation.error is None, result.message or result.observation.error
    variables = result.observation.variables
    return variables["seconds"]["value"], variables["final"]["value"]


def train_outside(threads: int) -> tuple[float, float]:
    import torch

    torch.set_num_threads(threads)
    namespace: dict = {}
    exec(compile(TRAIN, "<train>", "exec"), namespace)
    return namespace["seconds"], namespace["final"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--cold", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compile", type=int, default=1, help="rounds of the cold/warm torch.compile drill")
    parser.add_argument("--pause", type=float, default=0.15, help="seconds between runs at a learner's pace")
    args = parser.parse_args()
    request = trivial_request()
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"trivial drill: lessons/01, first drill ({len(request.code.splitlines())} lines, "
          f"{len(request.asks)} asks)")

    full = Sandbox()
    full.start_sync()
    print(f"isolation: {full.tier}")
    bare = Sandbox(tier="none")
    bare.start_sync()
    nopool = Sandbox(prefork=0)
    nopool.start_sync()

    async def all_warm():
        return {
            "full": await warm(full, request, args.runs, args.pause),
            "full_b2b": await warm(full, request, args.runs, 0),
            "full_nopool": await warm(nopool, request, args.runs, args.pause),
            "bare": await warm(bare, request, args.runs, args.pause),
            "bare_b2b": await warm(bare, request, args.runs, 0),
        }

    print("warm (Run → observation):")
    w = asyncio.run(all_warm())
    full_p50 = show("full isolation, learner's pace", w["full"])
    show("full isolation, back to back", w["full_b2b"])
    show("full isolation, no pre-forked runner", w["full_nopool"])
    bare_p50 = show("no isolation, learner's pace", w["bare"])
    show("no isolation, back to back", w["bare_b2b"])
    print("cold (a fresh sandbox: `python -I -m tutor.sandbox.inner` imports and warms torch, then one run):")
    starts, c = cold(request, args.cold)
    start_p50 = show("zygote start (until ready)", starts)
    cold_p50 = show("start and first run", c)
    print(f"ratio cold/warm p50: {cold_p50 / full_p50:.0f}x with full isolation, "
          f"{cold_p50 / bare_p50:.0f}x without (target ≥ 35x)")
    print(f"targets: full isolation p50 {full_p50:.1f} ms (≤ 35), none {bare_p50:.1f} ms (≤ 15)")

    print("compute: 20-step MLP training loop (inside the sandbox vs this process, alternating rounds):")
    threads = full.info.get("threads", 2)
    inside, outside, losses = [], [], set()
    for _ in range(args.rounds):
        s, loss = train_inside(full)
        inside.append(s)
        losses.add(loss)
        s, loss = train_outside(threads)
        outside.append(s)
        losses.add(loss)
    i, o = statistics.median(inside), statistics.median(outside)
    print(f"  inside  {i:.3f} s (median of {args.rounds}: {', '.join(f'{x:.3f}' for x in inside)})")
    print(f"  outside {o:.3f} s (median of {args.rounds}: {', '.join(f'{x:.3f}' for x in outside)})")
    print(f"  inside/outside {i / o:.3f} ({(i / o - 1) * 100:+.1f} %, target within ±5 %); "
          f"final loss {'identical' if len(losses) == 1 else 'DIFFERS'}: {sorted(losses)}")
    for box in (full, bare, nopool):
        box.close_sync()
    compile_cold = compile_warm = 0.0
    if args.compile and full.tier_level == "1":
        print("torch.compile (lessons/23's Inductor drill, needs: [exec]), the course's compile cache empty vs warm:")
        colds, warms = compile_runs(args.compile)
        compile_cold = show("cold: empty cache, g++ builds the kernel", colds)
        compile_warm = show("warm: the kernels come from the cache", warms)
        print(f"ratio cold/warm: {compile_cold / compile_warm:.1f}x; target warm ≤ 5000 ms: "
              f"{'met' if compile_warm <= 5000 else 'NOT met'}")
    print(json.dumps({"warm_full_p50": full_p50, "warm_full_p90": pct(w["full"], 0.9), "warm_none_p50": bare_p50,
                      "warm_none_p90": pct(w["bare"], 0.9), "cold_p50": cold_p50, "zygote_start_p50": start_p50,
                      "ratio_full": cold_p50 / full_p50, "inside_s": i, "outside_s": o,
                      "compile_cold_ms": compile_cold, "compile_warm_ms": compile_warm}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
