"""Benchmark: OpenMP's wait policy when several snippets train at once on few cores.

Why the sandbox's zygote sets ``OMP_WAIT_POLICY=PASSIVE`` (``zygote_process.zygote_environment``).
torch's CPU wheels parallelise with GNU OpenMP, whose idle workers spin for a while before they
sleep. One snippet alone hardly notices; several at once (a class on one server, the lesson check's
two workers, a learner's run beside the tutor's own work) each keep threads spinning on the cores the
others need. The same small training loop (a 64-512-10 MLP, 300 SGD steps on a 512-row batch, torch's
default thread count) runs as N processes at once, under each policy, in alternating rounds; the
wall time of each round (the slowest process) is printed and the medians compared side by side.

    .venv/bin/python benchmarks/bench_omp_wait.py [--processes 1,2,4] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

LOOP = """
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
m = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 10))
opt = torch.optim.SGD(m.parameters(), lr=0.01)
x, y = torch.randn(512, 64), torch.randint(10, (512,))
for _ in range(300):
    loss = F.cross_entropy(m(x), y); opt.zero_grad(); loss.backward(); opt.step()
"""


def round_time(processes: int, passive: bool) -> float:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if passive:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    started = time.perf_counter()
    running = [subprocess.Popen([sys.executable, "-c", LOOP], env=env) for _ in range(processes)]
    for p in running:
        p.wait()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", default="1,2,4", help="processes at once, per stage (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per stage")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; torch's default threads in each process")
    for n in (int(s) for s in args.processes.split(",")):
        times: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(args.rounds):
            for passive in (False, True):
                times[passive].append(round_time(n, passive))
        spin, sleep = statistics.median(times[False]), statistics.median(times[True])
        print(f"{n} at once: default (spinning) {spin:.2f} s, PASSIVE {sleep:.2f} s (median of {args.rounds}): "
              f"{spin / sleep:.2f}x", flush=True)


if __name__ == "__main__":
    main()
