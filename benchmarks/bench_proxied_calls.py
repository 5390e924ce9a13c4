"""Benchmark: what a check that calls the learner's code directly costs, against one that uses `probe:`.

A judged run (a repair's or a lab's) runs the learner's code in one confined process and the
check in another. With `probe:`, the learner's process computes what the check needs and both
processes come from the pre-forked pool. A check that calls the learner's functions itself
(``check: assert double(x) == ...``, the old packs' style) needs the learner's process to stay and
answer (``tutor/sandbox/inner/remote.py``): both halves are forked for the run (they need the
channel between them), and each call is one round trip. Measured side by side, in alternating
rounds on one warm sandbox, at a learner's pace (a pause between runs so the pool refills):

* probe: the check reads ``doubled``, computed by ``probe: doubled = double(x)``;
* proxied, 1 call: the check calls ``double(x)`` once;
* proxied, 201 calls: the check calls it 201 times; (that - 1 call) / 200 is one call's cost.

No budget: it reports (lessons/README.md, "Judged checks", quotes the figures).

    .venv/bin/python benchmarks/bench_proxied_calls.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.sandbox.client import Sandbox  # noqa: E402
from tutor.sandbox.wire import RunRequest  # noqa: E402

SETUP = "import torch\nx = torch.arange(64, dtype=torch.float32)\n"
CODE = "def double(v):\n    return v * 2\n"
CASES = {
    "probe": dict(probe="doubled = double(x)\n", check="assert torch.equal(doubled, x * 2)\n"),
    "proxied, 1 call": dict(check="assert torch.equal(double(x), x * 2)\n"),
    "proxied, 201 calls": dict(check="for _ in range(201):\n    assert torch.equal(double(x), x * 2)\n"),
}


async def measure(rounds: int) -> dict[str, list[float]]:
    box = Sandbox()
    await box.start()
    times: dict[str, list[float]] = {name: [] for name in CASES}
    try:
        for _ in range(rounds):
            for name, fields in CASES.items():
                await asyncio.sleep(0.3)  # a learner's pace: the pre-forked pool refills meanwhile
                started = time.perf_counter()
                result = await box.run(RunRequest(code=CODE, setup=SETUP, judged=True, **fields))
                times[name].append(time.perf_counter() - started)
                if not result.ok or result.observation.check != "passed":
                    raise SystemExit(f"{name}: {result.status} {result.message} "
                                     f"{result.observation and result.observation.check_message}")
    finally:
        await box.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    times = asyncio.run(measure(args.rounds))
    p50 = {name: statistics.median(t) * 1000 for name, t in times.items()}
    for name, ms in p50.items():
        print(f"{name:<20} p50 {ms:7.1f} ms   (min {min(times[name]) * 1000:.1f}, max {max(times[name]) * 1000:.1f})")
    print(f"a check that calls the learner's code, against probe: {p50['proxied, 1 call'] / p50['probe']:.2f}x "
          f"(+{p50['proxied, 1 call'] - p50['probe']:.0f} ms a run)")
    print(f"one proxied call: {(p50['proxied, 201 calls'] - p50['proxied, 1 call']) / 200:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
