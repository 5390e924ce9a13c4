"""Benchmark: launch → first frame of the map, course load, validate; against ``import textual.app``.

A script, not a timed test (load from other users of the machine moves the numbers). Every
figure is printed beside the baseline measured in the same run, alternating rounds:

* baseline: a fresh ``python -c "import textual.app"`` (the floor of any Textual app here);
* first frame: ``pytorch-tutor`` started on a pseudo-terminal (120x40, a fresh profile home)
  until the map's first module title has been drawn on it (ANSI stripped), i.e. what the
  learner sees, not a hook inside the app; then ctrl+q. While it runs, the app's own process
  is checked for torch (``/proc/PID/maps`` must hold no libtorch: only the zygote loads it),
  and the time until the status line says the sandbox is ready is noted (the learner can type
  long before that);
* load: ``load_course`` of the built-in course in a fresh process, cold (no parsed-course
  cache) and warm (cache filled by a previous run);
* validate: the whole ``pytorch-tutor validate`` command, warm, wall time.

Targets (issue 11): first frame ≤ 0.5 s with the course's 38 modules (if fewer are written,
``--modules 38`` builds a course repeating the written ones up to 38); validate of the whole
course ≤ 0.3 s warm; no torch in the UI process.

    .venv/bin/python benchmarks/bench_startup.py [--rounds 5] [--modules N]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.course.loader import load_course  # noqa: E402
from tutor.locations import builtin_course_dir  # noqa: E402

PYTHON = sys.executable
TUTOR = [PYTHON, "-m", "tutor"]
ANSI = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|.)")
# Modules the UI process imports beyond Textual's before it can draw the map: a figure that does not
# move with the machine's load, beside the timings that do.
IMPORTS = ("import sys, textual.app; before = set(sys.modules); "
           "import tutor.cli, tutor.app.launch, tutor.app.app, tutor.app.screens.map; "
           "print(len(set(sys.modules) - before))")
LOAD = ("import sys, time; t = time.perf_counter(); from tutor.course.loader import load_course; "
        "c = load_course(sys.argv[1]); print(time.perf_counter() - t, len(c.modules()), len(c.all_errors()))")


def wall(argv: list[str], env: dict) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, done.stdout


def first_frame(env: dict, course_dir: Path | None, marker: str, ready_marker: str) -> dict:
    """Start the tutor on a pty; seconds until ``marker`` is on screen, torch in its process, sandbox ready."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    argv = TUTOR + (["--lessons", str(course_dir), "--trust-lessons"] if course_dir else [])
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env={**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"},
                            cwd=ROOT, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    screen = b""
    seen: dict = {"frame": None, "ready": None, "torch_in_ui": None}
    deadline = started + 120
    try:
        while time.perf_counter() < deadline and seen["ready"] is None:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 1 << 16)
                except OSError:
                    break
                if not chunk:
                    break
                screen = (screen + chunk)[-(1 << 20):]
                text = ANSI.sub(b"", screen).decode("utf-8", "replace")
                now = time.perf_counter() - started
                if seen["frame"] is None and marker in text:
                    seen["frame"] = now
                    seen["torch_in_ui"] = torch_loaded(proc.pid)
                if seen["frame"] is not None and ready_marker in text:
                    seen["ready"] = now
            if proc.poll() is not None:
                break
        if seen["frame"] is not None:
            seen["torch_in_ui"] = seen["torch_in_ui"] or torch_loaded(proc.pid)  # after the zygote is up too
        os.write(master, b"\x11")  # ctrl+q
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    finally:
        os.close(master)
    if seen["frame"] is None:
        raise SystemExit("the map never appeared:\n" + ANSI.sub(b"", screen).decode("utf-8", "replace")[-2000:])
    return seen


def torch_loaded(pid: int) -> bool:
    try:
        return "libtorch" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def padded_course(modules: int, into: Path) -> Path:
    """The built-in course repeated up to ``modules`` module slots (ids suffixed), for scaling runs."""
    import yaml

    source = builtin_course_dir()
    course = yaml.safe_load((source / "course.yaml").read_text())
    written = [m for m in course["modules"] if m.get("file")]
    slots, previous = [], None
    for i in range(modules):
        base = written[i % len(written)]
        text = (source / base["file"]).read_text()
        new_id = f"{base['id']}r{i}" if i >= len(written) else base["id"]
        text = re.sub(rf"^module: *['\"]?{re.escape(base['id'])}['\"]?$", f"module: '{new_id}'", text, count=1,
                      flags=re.M)
        (into / f"{new_id}.yaml").write_text(text)
        slots.append({"id": new_id, "title": base["title"], "part": base["part"],
                      "requires": [previous] if previous else [], "file": f"{new_id}.yaml"})
        previous = new_id
    course["modules"] = slots
    (into / "course.yaml").write_text(yaml.safe_dump(course, sort_keys=False))
    return into


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--modules", type=int, default=0, help="repeat the written modules up to this many")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        course_dir = padded_course(args.modules, work / "course") if args.modules else None
        if course_dir is None:
            course_root = builtin_course_dir()
        else:
            (work / "course").mkdir(exist_ok=True)
            course_root = course_dir
        course = load_course(course_root)
        slots = course.slots
        written = len(course.modules())
        assert not course.all_errors(), course.all_errors()[:3]
        marker = slots[0].title[:30]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTORCH_TUTOR")}
        env["PYTHONDONTWRITEBYTECODE"] = "0"
        homes = {name: work / name for name in ("warm", "cold")}
        base = {name: {**env, "PYTORCH_TUTOR_HOME": str(home)} for name, home in homes.items()}
        validate = TUTOR + ["validate"] + ([str(course_dir)] if course_dir else [])
        wall(validate, base["warm"])  # fills the warm home's cache (and byte-compiles everything)
        # one launch not measured: a new profile is created and the app's own cache entries written (its
        # module files are named as the app names them, not as validate does), as on a learner's first day
        first_frame(base["warm"], course_dir, marker, "sandbox: tier")

        rows: dict[str, list[float]] = {k: [] for k in ("baseline", "frame", "ready", "load_cold", "load_warm",
                                                        "validate")}
        torch_seen = False
        for _ in range(args.rounds):
            rows["baseline"].append(wall([PYTHON, "-c", "import textual.app"], env)[0])
            seen = first_frame(base["warm"], course_dir, marker, "sandbox: tier")
            rows["frame"].append(seen["frame"])
            if seen["ready"] is not None:
                rows["ready"].append(seen["ready"])
            torch_seen = torch_seen or bool(seen["torch_in_ui"])
            shutil.rmtree(homes["cold"], ignore_errors=True)
            rows["load_cold"].append(float(wall([PYTHON, "-c", LOAD, str(course_root)], base["cold"])[1].split()[0]))
            rows["load_warm"].append(float(wall([PYTHON, "-c", LOAD, str(course_root)], base["warm"])[1].split()[0]))
            rows["validate"].append(wall(validate, base["warm"])[0])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    floor = median(rows["baseline"])
    extra_modules = int(wall([PYTHON, "-c", IMPORTS], env)[1].split()[0])
    print(f"course: {len(slots)} modules, {written} written; {args.rounds} rounds; medians [min–max]")
    print(f"  python -c 'import textual.app'      {floor:6.3f} s   (baseline, 1.00x)   "
          f"[{min(rows['baseline']):.3f}–{max(rows['baseline']):.3f}]")
    for key, label, target in (("frame", "launch -> first frame of the map", 0.5),
                               ("ready", "launch -> status line: sandbox ready", None),
                               ("validate", "pytorch-tutor validate (warm)", 0.3)):
        if not rows[key]:
            print(f"  {label:36} never seen")
            continue
        value = median(rows[key])
        goal = f"   target <= {target} s: {'met' if value <= target else 'NOT met'}" if target else ""
        spread = f"   [{min(rows[key]):.3f}–{max(rows[key]):.3f}]"  # the machine's load moves each round
        print(f"  {label:36} {value:6.3f} s   {value / floor:5.2f}x baseline{goal}{spread}")
    print(f"  load_course, fresh process, no cache {median(rows['load_cold']):6.3f} s")
    print(f"  load_course, fresh process, cached   {median(rows['load_warm']):6.3f} s")
    print(f"  modules the UI imports beyond textual.app before the map: {extra_modules}")
    print(f"  torch loaded in the UI process:      {'YES (a layering bug)' if torch_seen else 'no'}")
    frame, check = median(rows["frame"]), median(rows["validate"])
    print(f"targets, side by side: first frame {frame:.3f} s / 0.5 s ({'met' if frame <= 0.5 else 'NOT met'}), "
          f"validate warm {check:.3f} s / 0.3 s ({'met' if check <= 0.3 else 'NOT met'}); baseline {floor:.3f} s")
    return 1 if torch_seen else 0


if __name__ == "__main__":
    raise SystemExit(main())
