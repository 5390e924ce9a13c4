"""Benchmark: how far the course's drill variants move the answer (issue 32's table).

For each module file given (default: every module of the built-in course), per module: how many
prediction drills it has, how many declare `variants:`, and for each of those the number of distinct
answer tuples observed over DRAWS seeded instances (seeds 0..DRAWS-1, the instances a learner could
be given), with the median per module and the share of prediction drills that vary. The answers are
observed as `check` observes them: each instance runs through the tutoring service in the real
sandbox (machine kernels), so a tuple is what a learner would be graded against.

    .venv/bin/python benchmarks/bench_variant_spread.py [lessons/01_eager_mental_model.yaml ...] [--draws 20]

No budget: it reports (issue 32's goal: >= 70% of prediction drills vary in every module, median >= 5
distinct answer tuples), and how many drills say with `vary:` why they have no variants.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from pathlib import Path

from tutor.commands.drill_proof import _check_instance
from tutor.course import grants
from tutor.course.schema import DrillKind
from tutor.course.variants import present_drill_instance
from tutor.locations import builtin_course_dir
from tutor.sandbox.client import Sandbox
from tutor.commands.validation import load_targets


async def spread(modules, draws: int, options: dict) -> list[tuple[str, int, int, list[int]]]:
    sandbox = Sandbox(**options)
    await sandbox.start()
    rows = []
    try:
        for module in modules:
            predictions = [d for d in module.drills if d.kind is DrillKind.PREDICTION]
            counts = []
            for drill in (d for d in predictions if d.variants is not None):
                seen = set()
                for seed in range(draws):
                    report = await _check_instance(module, present_drill_instance(drill, seed), sandbox)
                    seen.add(tuple(sorted(report.observed.items())))
                counts.append(len(seen))
                print(f"  {module.id}/{drill.id}: {len(seen)} distinct answer tuples in {draws} draws", flush=True)
            exempt = sum(1 for d in predictions if d.variants is None and d.vary)
            rows.append((module.id, len(predictions), len(counts), counts, exempt))
    finally:
        await sandbox.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--draws", type=int, default=20)
    args = parser.parse_args()
    targets = load_targets(args.paths or [builtin_course_dir()])
    modules = [m for t in targets for m in t.modules]
    root = builtin_course_dir()
    options = grants.sandbox_options(root, modules)
    rows = asyncio.run(spread(modules, args.draws, options))
    print(f"\n{'module':<8}{'predictions':>12}{'vary':>6}{'share':>8}{'no-vary reason':>16}{'median distinct':>17}")
    for module_id, total, varying, counts, exempt in rows:
        share = f"{varying / total:.0%}" if total else "-"
        median = f"{statistics.median(counts):g}" if counts else "-"
        print(f"{module_id:<8}{total:>12}{varying:>6}{share:>8}{exempt:>16}{median:>17}")
    total = sum(r[1] for r in rows)
    varying = sum(r[2] for r in rows)
    exempt = sum(r[4] for r in rows)
    everything = [c for r in rows for c in r[3]]
    print(f"{'all':<8}{total:>12}{varying:>6}{(varying / total if total else 0):>8.0%}{exempt:>16}"
          f"{(statistics.median(everything) if everything else 0):>17g}")

if __name__ == "__main__":
    main()
