"""Benchmark: the course's check now against the check of an earlier commit (issue 32's budget).

Issue 32 lets the whole course's `check` (every instance it samples, two workers) take at most 1.5x
the check of the course before its variants. This runs `pytorch-tutor check --jobs 2` over the
built-in course of two trees side by side, in alternating rounds: the working tree, and BASE (a
commit, unpacked with `git archive` into a temporary folder; nothing in the checkout changes). Each
tree runs with its own code and its own course (the interpreter starts in that tree, so `tutor` and
`capstone` are imported from it), a fresh tutor home and this interpreter's packages. The wall time
of each check is printed, and the ratio of the medians.

    .venv/bin/python benchmarks/bench_check_budget.py --base 3df1881 [--rounds 1] [--setting machine ...]

Also printed: the drills' own run times summed (each drill line's seconds), the work apart from
how each tree's check schedules it on its workers.

Both checks must pass (a failed one is reported and its time is not a budget figure). On a shared
machine the figure is only as good as the machine is idle: run it with nothing else running.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = re.compile(r"^check: .*$", re.MULTILINE)
DRILL_LINE = re.compile(r"^(?:ok  |FAIL) \S+\s+([0-9.]+) s$", re.MULTILINE)  # one drill's time (its runs' sum)


def unpack(rev: str, into: Path) -> Path:
    """The tree at ``rev`` (tracked files only), as plain files under ``into``."""
    archive = into / "base.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(archive), rev], check=True)
    tree = into / "base"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    archive.unlink()
    return tree


def one_check(tree: Path, home: Path, settings: list[str]) -> tuple[float, float, str, bool]:
    env = {**os.environ, "PYTORCH_TUTOR_HOME": str(home)}
    env.pop("PYTHONPATH", None)
    command = [sys.executable, "-m", "tutor", "check", "--jobs", "2"]
    for setting in settings:
        command += ["--setting", setting]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    found = SUMMARY.findall(done.stdout + done.stderr)
    work = sum(float(t) for t in DRILL_LINE.findall(done.stdout))
    return seconds, work, found[-1] if found else (done.stdout + done.stderr)[-400:], done.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the commit whose course is the budget's reference")
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds (each runs both checks)")
    parser.add_argument("--setting", action="append", default=[], help="passed on to check (repeatable)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-check-") as scratch:
        scratch_dir = Path(scratch)
        trees = {"base": unpack(args.base, scratch_dir), "now": ROOT}
        times: dict[str, list[float]] = {"base": [], "now": []}
        works: dict[str, list[float]] = {"base": [], "now": []}
        failed = False
        for r in range(args.rounds):
            for name, tree in trees.items():
                home = scratch_dir / f"home-{name}-{r}"
                seconds, work, summary, ok = one_check(tree, home, args.setting)
                failed |= not ok
                times[name].append(seconds)
                works[name].append(work)
                print(f"round {r + 1}, {name:<4} ({args.base if name == 'base' else 'working tree'}): "
                      f"{seconds:7.1f} s wall, {work:7.1f} s of drill runs — {summary}", flush=True)
    base, now = statistics.median(times["base"]), statistics.median(times["now"])
    print(f"\n{os.cpu_count()} cores; check --jobs 2{''.join(' --setting ' + s for s in args.setting)}")
    print(f"base {base:.1f} s, now {now:.1f} s (medians of {args.rounds}): now / base = {now / base:.2f}x "
          f"(issue 32's budget: at most 1.50x)" + ("; A CHECK FAILED: not a budget figure" if failed else ""))
    # The work, apart from how a check's version schedules it on its workers: the drills' own run time.
    base_work, now_work = statistics.median(works["base"]), statistics.median(works["now"])
    print(f"drill run time summed over drills: base {base_work:.1f} s, now {now_work:.1f} s: "
          f"now / base = {now_work / base_work:.2f}x")


if __name__ == "__main__":
    main()
