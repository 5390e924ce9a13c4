"""Benchmark: `pytorch-tutor profile import` of a large export, through the command line.

Writes an export of N attempts (answers, observation and verdict like a drill's, spread over
two courses and forty modules), then imports it into a fresh profile and prints the time
(validating the whole file, then one transaction), and a second import of the same file
(every attempt already present).

    .venv/bin/python benchmarks/bench_profile_import.py [--attempts 100000]

Budget (tutor/progress/transfer.py): 100,000 attempts import in under 10 s.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.cli import main  # noqa: E402

BUDGET_SECONDS = 10.0


def export_file(path: Path, attempts: int) -> None:
    rows = [{"course": "builtin" if i % 3 else "other-pack", "module": f"{i % 40:02d}", "item": f"drill-{i % 17}",
             "kind": "prediction", "correct": bool(i % 2), "answers": {"shape": f"({i % 7}, 3)", "why": "strides"},
             "observed": {"shape": {"type": "size", "value": [i % 7, 3]}}, "verdict": {"shape": "right"},
             "seconds": 12.5, "at": f"2026-01-01T00:{(i // 60) % 60:02d}:{i % 60:02d}+00:00.{i:07d}",
             "confidence": 1 + i % 3} for i in range(attempts)]
    path.write_text(json.dumps({"format": "pytorch-tutor-profile", "version": 3, "attempts": rows, "cards": [],
                                "positions": [], "workspace": []}), encoding="utf-8")


def timed_import(path: Path) -> tuple[float, str]:
    out = io.StringIO()
    started = time.perf_counter()
    with redirect_stdout(out):
        status = main(["profile", "import", str(path)])
    seconds = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"import failed ({status}): {out.getvalue()}")
    return seconds, out.getvalue().strip()


def run(attempts: int) -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["PYTORCH_TUTOR_HOME"] = home
        path = Path(home) / "export.json"
        export_file(path, attempts)
        size = path.stat().st_size / (1 << 20)
        first, said = timed_import(path)
        again, said_again = timed_import(path)
    verdict = "within" if first < BUDGET_SECONDS else "OVER"
    print(f"export of {attempts:,} attempts ({size:.1f} MiB)")
    print(f"  first import:  {first:.2f} s ({said})")
    print(f"  second import: {again:.2f} s ({said_again})")
    print(f"budget: {attempts:,} attempts in under {BUDGET_SECONDS:g} s: {verdict} ({first:.2f} s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=100_000)
    run(parser.parse_args().attempts)
