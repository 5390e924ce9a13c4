"""`pytorch-tutor capstone <command> --package mine`: a capstone command on the learner's own package.

The package is assembled from the stage labs' files in the learner's tutor workspace
(``capstone/stages.py`` lists which lab writes which module); a stage the learner switched to
its reference, or has not written yet, is this project's module (``tutor.workspace.stage_file``
decides, as it does for chained labs). The learner's files are untrusted, so they are never
imported here: the command runs in the sandbox, which shows it the capstone workspace read-write
through the ``output-dir`` grant (and nothing else of the host), with a long timeout. The run's
progress comes back through a file in the workspace, read as capped, checked data; Ctrl-C asks
the run to stop at a step boundary through another file. The summary says whose code each
stage the command used was.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from capstone.progress import MAX_READ, ProgressBar, ProgressFollower
from capstone.stages import STAGE_LABS, StageLab, stage_for_lab
from tutor.commands.capstone_driver import DRIVER, STATUS_NAMES
from tutor.safe_text import inert, safe_line
from tutor.sandbox.wire import OUTPUT_RUN_TIMEOUT, OUTPUT_TARGET, RunRequest, Tier

PROGRESS_FILE, STOP_FILE = ".tutor-progress.jsonl", ".tutor-stop"
POLL_SECONDS = 0.2
# Commands that run stage code; `corpus` only reads a text file (no stage lab writes corpus.py).
NO_STAGE_CODE = ("corpus",)


@dataclass(frozen=True)
class StageChoice:
    stage: StageLab
    source: str | None  # the learner's file, or None: the reference runs
    note: str  # whose code it is, for the summary
    reference: str = ""  # the stage's reference: what the learner's file does not define comes from it
    import_rules: dict | None = None  # the lab's rules on what its file may import (forbid_modules, forbid_names)

    @property
    def name(self) -> str:
        return f"capstone.{self.stage.module}"


def learner_package(profile: str) -> list[StageChoice]:
    """Every stage lab of the built-in course, as the learner has it now."""
    from tutor.course.loader import load_course
    from tutor.course.schema import Stage
    from tutor.locations import builtin_course_dir
    from tutor.workspace import Workspace, stage_file

    course = load_course(builtin_course_dir())
    space = Workspace(profile, course.identity)  # the built-in course's lab files of this profile
    modules = {m.id: m for m in course.modules()}
    choices = []
    for row in STAGE_LABS:
        module = modules.get(row.course_module)
        drill = module.drill(row.lab) if module is not None and row.lab else None
        if drill is None:
            choices.append(StageChoice(row, None, f"{row.module}: the reference (no stage lab yet)"))
            continue
        text, note = stage_file(space, Stage(row.module, row.course_module, drill.id, drill.solution))
        rules = drill.rules.to_wire() if drill.rules is not None else {}
        choices.append(StageChoice(row, text, note, drill.solution,
                                   {k: v for k, v in rules.items() if k in ("forbid_modules", "forbid_names")}))
    return choices


def reference_imports(choices: list[StageChoice]) -> list[str]:
    """Why each stage file that imports its stage's reference is refused, by its lab's own rules
    (checked on the file's syntax tree, as the judge checks them: the file is never imported here).
    A file that does not parse is left to the run, which names its line."""
    import ast

    from tutor.sandbox.inner.labkit import check_rules

    refused = []
    for c in choices:
        if c.source is None or not c.import_rules:
            continue
        try:
            ast.parse(c.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        verdict = check_rules(c.import_rules, {c.stage.module: c.source})
        if verdict.status != "passed":
            refused.append(f"your {c.stage.module}.py (stage {c.stage.stage}, {c.stage.lab_ref}) imports the reference, "
                           f"so it would run the reference as yours: {verdict.message.splitlines()[0]}")
    return refused


def package_line(space, module) -> str | None:
    """The map's line for a module whose labs write capstone stages: whose code each stage is now
    (``None`` for any other module); ``space`` is the learner's ``tutor.workspace.Workspace`` of
    the course. One line, so it fits the map's details at 80 columns."""
    from tutor.course.schema import Stage
    from tutor.workspace import YOURS, stage_whose

    parts = []
    for drill in module.drills:
        row = stage_for_lab(module.id, drill.id)
        if row is not None:
            whose = stage_whose(space, Stage(row.module, module.id, drill.id, drill.solution))
            parts.append(f"stage {row.stage} {row.module}.py " + ("yours" if whose == YOURS else f"the reference ({whose})"))
    return ("Your package: " + "; ".join(parts)) if parts else None


def _references_of_yours(choices: list[StageChoice]) -> tuple[str, ...]:
    """The package's own files of the stages the learner wrote: hidden from the run (no route to them,
    an exec of the file's text included), so `--package mine` runs the learner's code or says it cannot."""
    from tutor.course import grants
    from tutor.locations import builtin_course_dir
    from tutor.sandbox.hidden_modules import hidden_paths

    return hidden_paths(grants.code_dirs(builtin_course_dir()),
                        [f"capstone.{c.stage.module}" for c in choices if c.source is not None])


def run_mine(args: argparse.Namespace, argv: list[str], profile: str) -> int:
    """Run the parsed capstone command on the learner's package, in the sandbox; its exit status."""
    command = args.command_name
    if command in NO_STAGE_CODE:
        print(f"capstone {command}: no stage lab writes this step, so it runs the reference", file=sys.stderr)
        return args.handler(args)
    if command == "serve" and not args.terminal:
        print("capstone serve --package mine: the sandbox has no network the browser could reach; "
              "use `--terminal` to print a generation from your package", file=sys.stderr)
        return 2
    try:
        choices = learner_package(profile)
    except ValueError as exc:  # an unreadable or oversized stage file: say which
        print(f"capstone {command} --package mine: {safe_line(str(exc))}", file=sys.stderr)
        return 2
    refused = reference_imports(choices)
    if refused:
        for line in refused:
            print(f"capstone {command} --package mine: {safe_line(line)}", file=sys.stderr)
        print("write the stage yourself, or switch it to the reference in the tutor (then the summary says so)",
              file=sys.stderr)
        return 2
    root = Path(args.workspace).resolve()
    root.mkdir(parents=True, exist_ok=True)
    request = RunRequest(code=driver_code(choices, inner_argv(argv)), needs=("output-dir",),
                         timeout=OUTPUT_RUN_TIMEOUT, hidden=_references_of_yours(choices))
    result = _run_in_sandbox(request, root)
    if isinstance(result, str):
        print(f"capstone {command} --package mine: {result}", file=sys.stderr)
        return 2
    return _report(result, choices, root, command)


def inner_argv(argv: list[str]) -> list[str]:
    """The learner's command line as the sandboxed run gets it: its workspace is the grant's target."""
    out, skip = [], False
    for token in argv:
        if skip:
            skip = False
            continue
        if token in ("--workspace", "--progress-file", "--stop-file"):
            skip = True
            continue
        if token.startswith(("--workspace=", "--progress-file=", "--stop-file=")):
            continue
        out.append(token)
    return out + ["--workspace", OUTPUT_TARGET, "--progress-file", f"{OUTPUT_TARGET}/{PROGRESS_FILE}",
                  "--stop-file", f"{OUTPUT_TARGET}/{STOP_FILE}"]


def driver_code(choices: list[StageChoice], argv: list[str]) -> str:
    """The sandboxed program: the learner's stage files as `capstone.<module>` (and `llm.<module>`)."""
    stages = {c.name: {"source": c.source, "reference": c.reference, "origin": f"<your {c.note.split('your ', 1)[-1]}>",
                       "label": f"your {c.stage.module}.py (stage {c.stage.stage}, {c.stage.lab_ref})"}
              for c in choices if c.source is not None}
    return (DRIVER.replace("STAGES_JSON", repr(json.dumps(stages))).replace("ARGV_JSON", repr(json.dumps(argv)))
            .replace("PROGRESS_JSON", repr(json.dumps(f"{OUTPUT_TARGET}/{PROGRESS_FILE}"))))


# ---------------------------------------------------------------- the run, its progress, Ctrl-C


class _WorkspaceFiles:
    """The two files the tutor shares with the sandboxed run, reached through the workspace's
    directory fd and never through a link (the run may have replaced them with anything)."""

    def __init__(self, root: Path):
        self.fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        for name in (PROGRESS_FILE, STOP_FILE):
            try:
                os.unlink(name, dir_fd=self.fd)
            except (FileNotFoundError, IsADirectoryError, PermissionError):
                pass

    def read_progress(self, offset: int) -> bytes:
        try:
            fd = os.open(PROGRESS_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=self.fd)
        except OSError:
            return b""
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return b""
            return os.pread(fd, MAX_READ, offset)
        finally:
            os.close(fd)

    def request_stop(self) -> bool:
        try:
            os.close(os.open(STOP_FILE, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=self.fd))
            return True
        except OSError:
            return False

    def close(self) -> None:
        os.close(self.fd)


def _run_in_sandbox(request: RunRequest, root: Path):
    """The run's result, or a sentence saying why it could not run. Progress is drawn meanwhile."""
    from tutor.course import grants
    from tutor.locations import builtin_course_dir
    from tutor.sandbox.client import Sandbox, run_sync
    from tutor.sandbox.zygote_process import SandboxUnavailable

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    box = Sandbox(read_only=grants.code_dirs(builtin_course_dir()), output_dir=root, prefork=0)
    files = None
    try:
        box.start_sync()
        if box.tier_level != Tier.NAMESPACES:
            return ("your code runs in the sandbox, and only tier 1 (namespaces) can give it the workspace "
                    f"to write; this machine offers {box.tier}")
        files = _WorkspaceFiles(root)
        follower = ProgressFollower(files.read_progress, lambda label, total, tps, first, stop_at:
                                    ProgressBar(label, total, tps, first_step=first, stop_at=stop_at),
                                    lambda text: safe_line(host_paths(text, root)), say)
        outcome: dict = {}
        worker = threading.Thread(target=lambda: outcome.update(result=run_sync(request, box)), daemon=True)
        worker.start()
        stopping = False
        while worker.is_alive():
            try:
                worker.join(POLL_SECONDS)
                follower.poll()
            except KeyboardInterrupt:
                if stopping or not files.request_stop():
                    follower.close()
                    say("aborted: the sandboxed run was stopped without a checkpoint of this moment")
                    box.close_sync()
                    worker.join(10)
                    return "aborted"
                stopping = True
                (follower.bar.log if follower.bar else say)(
                    "stopping after this step to write a checkpoint (Ctrl-C again to abort without one)")
        follower.poll()
        follower.close()
        return outcome.get("result") or "the sandboxed run ended without a result"
    except SandboxUnavailable as exc:
        return f"the sandbox could not start: {safe_line(str(exc))}"
    finally:
        if files is not None:
            files.close()
        box.close_sync()


def host_paths(text: str, root: Path) -> str:
    """The run's messages name the workspace where the sandbox shows it: say where it is on the host."""
    return re.sub(rf"(?<![\w/.]){re.escape(OUTPUT_TARGET)}(?=/|\b|$)", lambda _: str(root), text)


def reference_parts(reported, choices: list[StageChoice]) -> dict[str, list[str]]:
    """Per learner module, the reference's functions and classes the run took because the learner's
    file does not define them. The run is untrusted: its JSON is parsed, and only names that are
    top-level definitions of that stage's reference (parsed here, from this package) are kept."""
    import ast

    try:
        data = json.loads(reported) if isinstance(reported, str) and len(reported) < 20_000 else {}
    except ValueError:
        return {}
    out = {}
    for c in choices:
        names = data.get(c.name) if isinstance(data, dict) else None
        if c.source is None or not isinstance(names, list):
            continue
        defined = [n.name for n in ast.parse(c.reference).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        out[c.name] = [n for n in defined if n in names]
    return out


def _report(result, choices: list[StageChoice], root: Path, command: str) -> int:
    """Print what the run printed (paths in the host's terms), whose code ran, and its status."""
    text = host_paths(result.output or "", root)
    obs = result.observation
    if not result.ok or obs is None:
        sys.stdout.write(text)
        print(f"capstone {command} --package mine: {safe_line(result.message)}", file=sys.stderr)
        return 1
    values = {name: (obs.variables.get(name) or {}).get("value") for name in STATUS_NAMES}
    status, problem, imported = values["status"], values["problem"], values["imported"]
    sys.stdout.write(text)
    used = set(imported.split("|")) if isinstance(imported, str) else set()
    given = reference_parts(values["given"], choices)
    ran = [c.note + (f" (with the reference's {', '.join(given[c.name])}, which its lab gives)" if given.get(c.name) else "")
           for c in choices if c.name in used]
    if ran:
        print("package: " + "; ".join(inert(n) for n in ran), file=sys.stderr)
    if isinstance(problem, str) and problem:
        print(f"capstone {command} --package mine: {safe_line(problem)}", file=sys.stderr)
        return 1
    return status if isinstance(status, int) and not isinstance(status, bool) else 1
