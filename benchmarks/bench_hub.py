"""Benchmark: memory per learner and Run latency as learners are added, through a real JupyterHub.

``bench_serve_ui.py``'s method, with the whole path a hub's learner has (issue 34 item 5): the hub
of ``tests/hub/test_jupyterhub.py`` (the shipped config; one class password; every learner's
Jupyter server as this account, each with a home of its own), each simulated learner logging in,
spawning their server and opening ``/user/NAME/tutor/`` over the hub's proxy and
jupyter-server-proxy, then speaking textual-serve's protocol as the page does.

* memory per learner: the learner's Jupyter server and everything under it (serve-ui, the tab's
  tutor, its sandbox zygote and runners), PSS and RSS from /proc, median over the stage's learners;
  the hub, its proxy and its services once, apart.
* latency: each learner re-runs a (wrong) prediction with a think time between runs (default
  5 s, jittered); a Run is timed from the Enter leaving the client until the new verdict's bytes
  arrive, through the hub's proxy. p50 and p90 per stage.
* learners per core: the largest stage whose Run p90 stayed under 1 s, divided by the cores.

Needs the test extras and Node's configurable-http-proxy (as the hub test). Each stage starts a
fresh hub, so a stage's learners are all new. A script, not a timed test:

    .venv/bin/python benchmarks/bench_hub.py [--stages 1,2,4,8] [--runs 6] [--think 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from bench_serve_ui import Learner as Tab, _children, _descendants, _memory, learn, mib, percentile  # noqa: E402
from tests.hub.test_jupyterhub import Hub, Learner as Browser, _missing, write_config  # noqa: E402


def users_servers(hub_pid: int) -> dict[str, int]:
    """Each learner's Jupyter server process, by the hub's JUPYTERHUB_USER in its environment."""
    found = {}
    for pid in _descendants(hub_pid, _children()):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item)
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read()
        except OSError:
            continue
        if b"jupyterhub-singleuser" in command and b"JUPYTERHUB_USER" in env:
            found[env[b"JUPYTERHUB_USER"].decode()] = pid
    return found


def tree_memory(pid: int) -> tuple[int, int]:
    sizes = [_memory(p) for p in _descendants(pid, _children())]
    return sum(s[0] for s in sizes), sum(s[1] for s in sizes)


async def stage(learners: int, runs: int, think: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-hub-") as folder:
        config, base, hub_api = write_config(Path(folder), [f"learner{i}" for i in range(learners)])
        hub = Hub(config, Path(folder), hub_api)
        try:
            hub.wait_for_line(r"JupyterHub is now running at")
            browsers = [Browser(base, f"learner{i}") for i in range(learners)]
            try:
                await asyncio.gather(*(b.log_in_and_open_the_tutor() for b in browsers))
                tabs = []
                for b in browsers:  # the websocket each browser opened, driven as bench_serve_ui drives one
                    tab = Tab(b.http, "")
                    tab.ws = b.ws
                    tab.reader = asyncio.create_task(tab._read())
                    tabs.append(tab)
                await asyncio.gather(*(t.open_first_drill() for t in tabs))
                await asyncio.gather(*(t.answer() for t in tabs))
                await asyncio.gather(*(t.run() for t in tabs))  # every sandbox warm before memory is read
                servers = users_servers(hub.process.pid)
                per_learner = [tree_memory(pid) for pid in servers.values()]
                everyone = set(_descendants(hub.process.pid, _children()))
                theirs = {p for pid in servers.values() for p in _descendants(pid, _children())}
                shared = [_memory(p) for p in everyone - theirs]
                await asyncio.gather(*(learn(t, runs, think) for t in tabs))
                for tab in tabs:
                    tab.reader.cancel()
            finally:
                for b in browsers:
                    await b.close()
        finally:
            hub.stop()
    latencies = [x for t in tabs for x in t.latencies]
    return {"learners": learners, "per_learner": per_learner, "hub": (sum(s[0] for s in shared), sum(s[1] for s in shared)),
            "p50": statistics.median(latencies), "p90": percentile(latencies, 0.9), "runs": len(latencies)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stages", default="1,2,4,8", help="learners per stage (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=6, help="timed runs per learner per stage")
    parser.add_argument("--think", type=float, default=5.0, help="mean seconds between a learner's runs")
    args = parser.parse_args()
    if why := _missing():
        raise SystemExit(f"no JupyterHub here: {why}")
    random.seed(0)
    cores = os.cpu_count() or 1
    results = []
    for learners in (int(s) for s in args.stages.split(",")):
        r = await stage(learners, args.runs, args.think)
        results.append(r)
        pss = statistics.median(m[0] for m in r["per_learner"])
        rss = statistics.median(m[1] for m in r["per_learner"])
        print(f"{learners:3d} learners: per learner PSS {mib(pss)}, RSS {mib(rss)}; hub, proxy and services "
              f"PSS {mib(r['hub'][0])}; Run p50 {r['p50'] * 1000:.0f} ms, p90 {r['p90'] * 1000:.0f} ms "
              f"over {r['runs']} runs", flush=True)
    passing = [r["learners"] for r in results if r["p90"] < 1.0]
    if not passing:
        print("\nRun p90 was over 1 s at every stage")
        return
    best = max(passing)
    tail = " (every stage passed: a lower bound; add stages)" if best == max(r["learners"] for r in results) else ""
    print(f"\nRun p90 under 1 s up to {best} concurrent learners on {cores} cores: {best / cores:g} learners "
          f"per core{tail} (think time {args.think:g} s)")


if __name__ == "__main__":
    asyncio.run(main())
