"""``pytorch-tutor run``: run any snippet file in the sandbox and print what it saw."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from tutor.grading import describe_error
from tutor.safe_text import inert
from tutor.sandbox.client import run_sync
from tutor.sandbox.wire import RunRequest
from tutor.value_text import describe_briefly


def run_snippet_file(path: Path, timeout: float, out: TextIO) -> int:
    try:
        code = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"pytorch-tutor run: cannot read {path}: {exc}", file=out)
        return 2
    if not 0 < timeout <= 600:
        print("pytorch-tutor run: --timeout must be between 0 and 600 seconds", file=out)
        return 2
    result = run_sync(RunRequest(code=code, timeout=timeout))
    obs = result.observation
    verdict = _verdict(result)
    # the header states the verdict: "— ok" above a SyntaxError read as success
    print(f"== {path} — {verdict} in {result.seconds:.2f} s", file=out)
    if result.output:
        print("-- output", file=out)
        print(result.output.rstrip("\n"), file=out)
        if result.output_truncated:
            print(f"… [{result.output_truncated:,} more bytes of output not kept]", file=out)
    if obs is None:
        print(f"-- verdict: {result.message}", file=out)
        return 1
    if obs.variables:
        print("-- variables", file=out)
        for name, value in obs.variables.items():
            print(f"{inert(name)} = {describe_briefly(value)}", file=out)
    if obs.error:
        print(f"-- error: {describe_error(obs.error)}", file=out)
    for rule in obs.fence:
        print(f"-- fence rule broken: {rule}", file=out)
    print(f"-- verdict: {verdict}", file=out)
    return 0 if verdict == "ok" else 1


def _verdict(result) -> str:
    obs = result.observation
    if obs is None:
        return f"did not finish ({result.status})"
    if obs.error:
        return f"error ({inert(obs.error.type)})"
    return "fence rule broken" if obs.fence else "ok"
