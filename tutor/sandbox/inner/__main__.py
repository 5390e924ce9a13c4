"""The zygote as a program: ``python -I -m tutor.sandbox.inner --fd N [--tier T] [--pool K] [--read-only FD:PATH]...``.

Started by the UI side (``client.py``) with a minimal environment (no secrets:
``/proc/self/environ`` of every runner shows only that), it talks over the socket
``N`` (frames: ``framing.py``), warms torch (``start.py``), then serves (``loop.py``).
"""

from __future__ import annotations

import argparse
import socket
import sys

from tutor.sandbox import framing
from tutor.sandbox.inner.loop import Zygote
from tutor.sandbox.inner.start import prepare
from tutor.sandbox.inner.warm import COMPILE_MODULES, LateImports
from tutor.sandbox.wire import Tier


def _held_dir(value: str) -> tuple[int, str]:
    fd, _, path = value.partition(":")
    return int(fd), path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -I -m tutor.sandbox.inner")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--tier", default=Tier.NAMESPACES, type=Tier, choices=tuple(Tier))
    parser.add_argument("--pool", type=int, default=2)
    parser.add_argument("--read-only", action="append", default=[], dest="read_only", type=_held_dir,
                        help="FD:PATH: a directory to show read-only at PATH, as the descriptor FD the caller holds")
    parser.add_argument("--compile-cache", default="", dest="compile_cache")
    parser.add_argument("--warm-compile", action="store_true", dest="warm_compile")
    parser.add_argument("--output-dir", default="", dest="output_dir")
    parser.add_argument("--threads", type=int, default=0)  # intra-op threads for every run (0: torch's default)
    args = parser.parse_args(argv)
    sock = socket.socket(fileno=args.fd)
    sock.setblocking(True)
    try:
        started = prepare(args.tier, args.read_only, args.compile_cache, args.output_dir, args.threads)
    except BaseException as exc:  # noqa: BLE001 - tell the UI why, then go
        try:
            sock.sendall(framing.pack({"op": "error", "message": f"{type(exc).__name__}: {exc}"[:2000]}))
        except OSError:
            pass
        return 1
    zygote = Zygote(sock, started, args.pool)
    if args.warm_compile and args.tier == Tier.NAMESPACES:  # tier 1 alone grants exec, which compiling needs
        zygote.late = LateImports(COMPILE_MODULES)
    started.facts["compile_warming"] = zygote.late is not None  # a "warmed" message will follow
    try:
        zygote.send(started.facts)
        zygote.serve()
    except (SystemExit, OSError, framing.FrameError):
        pass
    finally:
        zygote.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
