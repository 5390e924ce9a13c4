"""Running snippets out of process. The parent side imports neither torch nor Textual.

Two sides share one wire (``wire.py``): the UI side (``client.py``, ``doctor.py``) and the
inner side, the package ``tutor.sandbox.inner`` that runs as its own program
(``python -I -S``, running ``tutor.sandbox.inner``). This package's import is kept empty of work (the
names below load on first use) because the inner side imports ``tutor.sandbox.wire``
through it and must not pull in the UI side.
"""

from __future__ import annotations

__all__ = ["AskSpec", "ErrorInfo", "Observation", "RunRequest", "RunResult", "Sandbox", "run_sync"]


def __getattr__(name: str):
    if name in ("AskSpec", "ErrorInfo", "Observation", "RunRequest"):
        from tutor.sandbox import wire

        return getattr(wire, name)
    if name in ("RunResult", "Sandbox", "run_sync"):
        from tutor.sandbox import client

        return getattr(client, name)
    raise AttributeError(f"module 'tutor.sandbox' has no attribute {name!r}")
