"""``pytorch-tutor doctor``: how snippets are isolated here, checked by running one."""

from __future__ import annotations

import sys
from typing import TextIO

from tutor.sandbox.client import Sandbox, run_sync
from tutor.sandbox.protocol import AskSpec, RunRequest


def print_report(out: TextIO) -> int:
    sandbox = Sandbox()
    print(f"python:   {sys.executable}", file=out)
    print(f"sandbox:  {sandbox.tier}", file=out)
    result = run_sync(RunRequest(code="import torch\nversion = torch.__version__",
                                 asks=(AskSpec("version", "version"),)), sandbox)
    if not result.ok:
        print(f"torch:    cannot run a snippet: {result.message}", file=out)
        return 1
    version = result.observation.asks["version"].value.get("value", "?")
    print(f"torch:    {version} (a trivial snippet ran in {result.seconds * 1000:.0f} ms)", file=out)
    return 0
