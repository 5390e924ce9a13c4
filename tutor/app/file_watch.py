"""One way the app watches files (``--watch``'s course reload, a lab's file saved in another editor)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path


async def file_changes(directory: Path, wanted: Callable[[str], bool], debounce_ms: int) -> AsyncIterator[None]:
    """Once per batch of changes to the files under ``directory`` that ``wanted(path)`` accepts.

    Runs until the worker awaiting it is cancelled. Without watchfiles (a dependency, but
    an installation may lack its wheel) nothing is ever reported: the manual keys still work.
    """
    try:
        from watchfiles import awatch
    except ImportError:  # pragma: no cover
        return
    # rust_timeout: the watcher wakes each second, so cancelling the worker stops it promptly
    async for batch in awatch(directory, watch_filter=lambda _change, path: wanted(path), debounce=debounce_ms,
                              rust_timeout=1000):
        if batch:
            yield
