"""Benchmark: memory per connected learner under ``serve-ui``, and Run latency as learners are added.

A script, not a timed test (other users of the machine move the numbers).

Method. One real ``pytorch-tutor serve-ui`` (the mini test course) on a free loopback port.
Each simulated learner is a websocket client speaking textual-serve's protocol, exactly as
the page's xterm.js does (``["stdin", keys]`` out, terminal bytes in), so the server side —
one app process per connection plus that process's sandbox zygote and runners — is the real
one; only the browser (which runs on the learner's machine) is left out.

* memory: after every learner of a stage has opened the drill and run it once, the server's
  process tree is walked through /proc and each connection's processes (the shell textual-serve
  starts, the app, its zygote, the zygote's runners) are summed: PSS (shared pages such as
  torch's libraries split between the processes that map them: what one more learner really
  costs) and RSS (the pessimistic figure). Reported per learner (median over the stage's
  learners) and for the server process alone.
* latency: each learner then runs its (wrong) prediction on the first drill again and again,
  with a think time between runs (default 5 s, jittered so the learners do not march in step);
  a Run is timed from the Enter keystroke leaving the client until the bytes of the new verdict
  ("Not yet" / "Verified") arrive: the sandbox run plus grading plus rendering plus the relay.
  p50 and p90 per stage.
* learners per machine: min(memory bound, latency bound). The memory bound is 80 % of a 24 GiB
  machine divided by PSS per learner; the latency bound is the largest stage measured whose p90
  stayed under 1 s (a lower bound when every stage passed: the script says so).

    .venv/bin/python benchmarks/bench_serve_ui.py [--stages 1,2,4,8] [--runs 6] [--think 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "tests" / "fixtures" / "mini_course"
MACHINE_BYTES = 24 << 30
SERVING = re.compile(rb"Serving pytorch-tutor on http://([^/\s]+)/\?token=(\S+)")
ANSWER, VERDICT = "(3, 1)", b"Not yet"  # a wrong prediction keeps the drill open, so every run grades


def start_server(home: Path, tabs: int) -> tuple[subprocess.Popen, str]:
    """The server, and its websocket's address with the token it printed (the browser's cookie, here)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tutor", "--lessons", str(COURSE), "--trust-lessons", "serve-ui", "--port", "0",
         "--max-sessions", str(tabs)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTORCH_TUTOR_HOME": str(home)}, start_new_session=True, cwd=ROOT)
    assert process.stdout is not None
    for line in process.stdout:
        match = SERVING.search(line)
        if match:
            return process, f"ws://{match.group(1).decode()}/ws?token={match.group(2).decode()}"
    raise SystemExit("serve-ui did not start")


class Learner:
    """One browser tab, minus the browser: a websocket to textual-serve."""

    def __init__(self, session: aiohttp.ClientSession, address: str) -> None:
        self.session, self.address = session, address
        self.seen = bytearray()
        self.arrived = asyncio.Event()
        self.latencies: list[float] = []

    async def connect(self) -> None:
        self.ws = await self.session.ws_connect(f"{self.address}&width=120&height=40", max_msg_size=0)
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.ws:
            if message.type == aiohttp.WSMsgType.BINARY:
                self.seen += message.data
                self.arrived.set()

    async def wait_for(self, needle: bytes, since: int, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.seen[since:]:
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), max(0.01, deadline - time.monotonic()))

    async def quiet(self, for_seconds: float = 0.5) -> None:
        """Until the screen stops changing (a result scrolls into view after a run)."""
        while True:
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), for_seconds)
            except TimeoutError:
                return

    async def keys(self, data: str) -> None:
        for key in data:  # one message per key, as xterm.js sends typing
            await self.ws.send_json(["stdin", key])

    async def open_first_drill(self) -> None:
        await self.wait_for(b"First steps", 0)
        await self.ws.send_json(["focus"])  # as xterm.js does when its tab gets focus; blurred, no key reaches a field
        await self.quiet()
        mark = len(self.seen)
        await self.keys("\r")
        await self.wait_for(b"y.stride()", mark)
        await self.quiet()

    async def answer(self) -> None:
        """Type the (wrong) prediction once; every later Run re-submits it."""
        await self.keys(ANSWER)
        await self.quiet(0.3)

    async def run(self) -> float:
        mark = len(self.seen)
        started = time.perf_counter()
        await self.keys("\r")
        await self.wait_for(VERDICT, mark)  # the status goes "running" and back, so the verdict is sent anew
        elapsed = time.perf_counter() - started
        await self.quiet()
        return elapsed

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                parent = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        tree.setdefault(parent, []).append(int(entry))
    return tree


def _descendants(pid: int, tree: dict[int, list[int]]) -> list[int]:
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(tree.get(current, []))
    return found


def _memory(pid: int) -> tuple[int, int]:
    """(PSS, RSS) in bytes from smaps_rollup."""
    pss = rss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
    except OSError:
        pass
    return pss, rss


def per_connection_memory(server_pid: int) -> tuple[tuple[int, int], list[tuple[int, int, int]]]:
    """The server's own (PSS, RSS) and, per connection, (PSS, RSS, process count)."""
    tree = _children()
    connections = []
    for child in tree.get(server_pid, []):
        pids = _descendants(child, tree)
        sizes = [_memory(p) for p in pids]
        connections.append((sum(s[0] for s in sizes), sum(s[1] for s in sizes), len(pids)))
    return _memory(server_pid), connections


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def learn(tab: Learner, runs: int, think: float) -> None:
    """One learner's timed Runs, a jittered think time apart (so the learners do not march in step)."""
    await asyncio.sleep(random.uniform(0, think))
    for _ in range(runs):
        tab.latencies.append(await tab.run())
        await asyncio.sleep(think * random.uniform(0.5, 1.5))


async def stage(address: str, server_pid: int, learners: int, runs: int, think: float) -> dict:
    async with aiohttp.ClientSession() as session:
        tabs = [Learner(session, address) for _ in range(learners)]
        for tab in tabs:
            await tab.connect()
        await asyncio.gather(*(tab.open_first_drill() for tab in tabs))
        await asyncio.gather(*(tab.answer() for tab in tabs))
        await asyncio.gather(*(tab.run() for tab in tabs))  # every sandbox warm before memory is read
        server_mem, connections = per_connection_memory(server_pid)
        await asyncio.gather(*(learn(tab, runs, think) for tab in tabs))
        for tab in tabs:
            await tab.close()
    latencies = [x for tab in tabs for x in tab.latencies]
    return {"learners": learners, "server": server_mem, "connections": connections,
            "p50": statistics.median(latencies), "p90": percentile(latencies, 0.9), "runs": len(latencies)}


def mib(value: float) -> str:
    return f"{value / (1 << 20):.0f} MiB"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stages", default="1,2,4,8", help="learners per stage (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=6, help="timed runs per learner per stage")
    parser.add_argument("--think", type=float, default=5.0, help="mean seconds between a learner's runs")
    args = parser.parse_args()
    random.seed(0)
    with tempfile.TemporaryDirectory(prefix="bench-serve-ui-") as home:
        server, address = start_server(Path(home), max(int(s) for s in args.stages.split(",")))
        try:
            results = []
            for learners in (int(s) for s in args.stages.split(",")):
                result = await stage(address, server.pid, learners, args.runs, args.think)
                results.append(result)
                pss = statistics.median(c[0] for c in result["connections"])
                rss = statistics.median(c[1] for c in result["connections"])
                procs = statistics.median(c[2] for c in result["connections"])
                print(f"{learners:3d} learners: per learner PSS {mib(pss)}, RSS {mib(rss)} ({procs:.0f} processes); "
                      f"server PSS {mib(result['server'][0])}; Run p50 {result['p50'] * 1000:.0f} ms, "
                      f"p90 {result['p90'] * 1000:.0f} ms over {result['runs']} runs", flush=True)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(60)
    pss = statistics.median(c[0] for r in results for c in r["connections"])
    rss = statistics.median(c[1] for r in results for c in r["connections"])
    memory_bound = int(MACHINE_BYTES * 0.8 // pss)
    passing = [r["learners"] for r in results if r["p90"] < 1.0]
    latency_bound = max(passing) if passing else 0
    print(f"\nper learner: PSS {mib(pss)} (RSS {mib(rss)}); 80 % of 24 GiB holds {memory_bound} learners by memory")
    if latency_bound == max(r["learners"] for r in results):
        print(f"Run p90 stayed under 1 s at every stage up to {latency_bound} concurrent learners "
              f"(think time {args.think:g} s): a lower bound; add stages to find where it breaks")
    else:
        print(f"Run p90 under 1 s up to {latency_bound} concurrent learners (think time {args.think:g} s)")
    print(f"learners per 2-core, 24 GiB machine: {min(memory_bound, latency_bound) if latency_bound else 0}"
          + (" or more" if latency_bound == max(r["learners"] for r in results) and latency_bound < memory_bound
             else ""))


if __name__ == "__main__":
    asyncio.run(main())
