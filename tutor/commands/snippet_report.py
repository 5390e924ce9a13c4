"""``pytorch-tutor run``: run any snippet file in the sandbox and print what it saw.

The run is a use case of the tutoring service (:meth:`TutoringService.run_snippet`)
and its report is drawn by the one presenter (``presentation.snippet_blocks`` ->
``plain_lines``), like every other front end's; this module only reads the file.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Sequence, TextIO

from tutor.sandbox.client import default_sandbox
from tutor.sandbox.wire import MAX_VIEWS, ViewSpec
from tutor.tutoring.presentation import plain_lines, snippet_blocks
from tutor.tutoring.reports import SnippetReport
from tutor.tutoring.service import SandboxPort, TutoringService
from tutor.tutoring.view_blocks import read_view_request


def run_snippet_file(path: Path, timeout: float, out: TextIO, sandbox: SandboxPort | None = None, trace: bool = False,
                     function: str = "", views: Sequence[Sequence[str]] = ()) -> int:
    """Run ``path`` and print what it observed; ``trace``: its rows too (``function``: inside that function).

    ``views``: each ``--view`` as its words (``["graph", "loss"]``), read by the one reader the
    app's ctrl+l and plain mode's ``:view`` use.
    """
    specs = []
    for words in views:
        read = read_view_request(" ".join(words))
        if isinstance(read, str):
            print(f"pytorch-tutor run: --view {' '.join(words)[:60]}: {read}", file=out)
            return 2
        specs.append(ViewSpec(*read))
    if len(specs) > MAX_VIEWS:
        print(f"pytorch-tutor run: at most {MAX_VIEWS} views a run", file=out)
        return 2
    try:
        code = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"pytorch-tutor run: cannot read {path}: {exc}", file=out)
        return 2
    if not 0 < timeout <= 600:
        print("pytorch-tutor run: --timeout must be between 0 and 600 seconds", file=out)
        return 2
    if function and not trace:
        print("pytorch-tutor run: --function goes with --trace", file=out)
        return 2
    report = run_snippet(code, timeout, str(path), sandbox, function if trace else None, tuple(specs))
    for text in plain_lines(snippet_blocks(report)):
        print(text, file=out)
    return 0 if report.clean else 1


def run_snippet(code: str, timeout: float, source: str, sandbox: SandboxPort | None = None,
                trace_function: str | None = None, views: tuple[ViewSpec, ...] = ()) -> SnippetReport:
    """One snippet through the service, recording off (by default in the process's shared sandbox).

    ``trace_function``: run it traced (``""``: the top-level statements only); ``views``: made after it ran.
    """
    service = TutoringService(None, sandbox or default_sandbox())
    return asyncio.run(service.run_snippet(code, timeout, source, trace_function, views))
