"""The parent side of the sandbox: start a child, feed it, watch it, read it.

Pure asyncio, no Textual: the app's worker awaits :meth:`Sandbox.run`, the CLI
wraps it in ``asyncio.run``. Every child gets its own session (process group)
and scratch directory; whatever happens (timeout, crash, flood, cancellation)
the whole group is killed and the scratch directory removed before returning.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tutor.safe_text import inert
from tutor.sandbox.protocol import READY, BadResult, Observation, RunRequest, parse_observation

CHILD_SCRIPT = Path(__file__).with_name("child.py")
OUTPUT_LIMIT = 64 * 1024
START_TIMEOUT = 90.0  # importing torch cold can take a while on a loaded machine
GRACE = 3.0  # time after the snippet's limit for describing values and writing JSON


@dataclass
class RunResult:
    """How a run ended; ``observation`` is set only when ``status == "ok"``."""

    status: str  # ok | timeout | crashed | no_result | bad_result | failed_to_start
    observation: Observation | None = None
    output: str = ""
    output_truncated: int = 0  # bytes of output not kept
    seconds: float = 0.0
    message: str = ""
    exit_code: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def child_environment(scratch: str) -> dict[str, str]:
    """A minimal environment: the learner's secrets and settings stay in the parent."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": scratch,
        "TMPDIR": scratch,
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONUNBUFFERED": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "CUDA_VISIBLE_DEVICES": "",
    }


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


async def _read_capped(stream: asyncio.StreamReader, limit: int) -> tuple[bytes, int]:
    kept = bytearray()
    dropped = 0
    while chunk := await stream.read(65536):
        room = limit - len(kept)
        if room > 0:
            kept += chunk[:room]
        dropped += max(0, len(chunk) - max(room, 0))
    return bytes(kept), dropped


async def _read_to_eof(stream: asyncio.StreamReader, limit: int) -> bytes:
    data, dropped = await _read_capped(stream, limit + 1)
    if dropped or len(data) > limit:
        raise BadResult(f"result larger than {limit:,} bytes")
    return data


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class Sandbox:
    """Runs snippets, one child process per run."""

    def __init__(self, python: str | None = None, output_limit: int = OUTPUT_LIMIT,
                 start_timeout: float = START_TIMEOUT):
        self.python = python or sys.executable
        self.output_limit = output_limit
        self.start_timeout = start_timeout
        self.live: set[int] = set()  # process groups of runs in flight: each is killed before run() returns

    @property
    def tier(self) -> str:
        """A short description of the isolation in force, for the status line and ``doctor``."""
        return "process per run"

    async def start(self) -> None:
        """Prepare for the first run (the app calls this in the background at launch)."""

    async def close(self) -> None:
        """Stop anything :meth:`start` left running."""

    async def run(self, request: RunRequest) -> RunResult:
        scratch = tempfile.mkdtemp(prefix="pytorch-tutor-run-")
        try:
            proc = await asyncio.create_subprocess_exec(
                self.python, "-I", str(CHILD_SCRIPT),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                cwd=scratch, env=child_environment(scratch), start_new_session=True,
            )
        except OSError as exc:
            shutil.rmtree(scratch, ignore_errors=True)
            return RunResult("failed_to_start", message=f"Could not start the sandbox: {exc}")
        self.live.add(proc.pid)
        try:
            return await self._supervise(proc, request)
        finally:
            self.live.discard(proc.pid)
            _kill_group(proc.pid)
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except (asyncio.TimeoutError, ProcessLookupError):
                pass
            shutil.rmtree(scratch, ignore_errors=True)

    async def _supervise(self, proc: asyncio.subprocess.Process, request: RunRequest) -> RunResult:
        assert proc.stdin and proc.stdout and proc.stderr
        output_task = asyncio.create_task(_read_capped(proc.stderr, self.output_limit))
        try:
            proc.stdin.write(request.to_json())
            await proc.stdin.drain()
            proc.stdin.close()
        except (BrokenPipeError, ConnectionResetError):
            pass

        result = RunResult("ok")
        started = time.monotonic()
        try:
            ready = await asyncio.wait_for(proc.stdout.readline(), self.start_timeout)
            if ready != READY:
                raise _EarlyExit()
            started = time.monotonic()
            raw = await asyncio.wait_for(_read_to_eof(proc.stdout, 1 << 20), request.timeout + GRACE)
            await asyncio.wait_for(proc.wait(), GRACE)
        except asyncio.TimeoutError:
            _kill_group(proc.pid)
            limit = request.timeout if started else self.start_timeout
            result = RunResult("timeout", message=f"The snippet ran longer than its {limit:g} s limit and was "
                                                  "stopped (with any processes it started).")
        except _EarlyExit:
            await proc.wait()
            result = RunResult("failed_to_start", message="The sandbox could not start Python with torch.")
        except BadResult as exc:
            _kill_group(proc.pid)
            result = RunResult("bad_result", message=f"The snippet's result could not be read: {exc}.")
        else:
            result = self._interpret(proc.returncode, raw)
        result.seconds = time.monotonic() - started
        _kill_group(proc.pid)  # also ends any grandchildren still holding the output pipe
        try:
            output, dropped = await asyncio.wait_for(output_task, 5)
        except asyncio.TimeoutError:
            output_task.cancel()
            output, dropped = b"", 0
        result.output = inert(output.decode("utf-8", "replace"))
        result.output_truncated = dropped
        if result.exit_code is None:
            result.exit_code = proc.returncode
        return result

    @staticmethod
    def _interpret(returncode: int | None, raw: bytes) -> RunResult:
        line = raw.split(b"\n", 1)[0] if raw else b""
        if not line:
            if returncode is not None and returncode < 0:
                name = _signal_name(-returncode)
                why = " (its CPU-time limit)" if name == "SIGXCPU" else ""
                return RunResult("crashed", message=f"The snippet's process was killed by {name}{why} "
                                                     "before it could be observed.", exit_code=returncode)
            return RunResult("no_result", message="The snippet ended its process before the tutor could observe "
                                                   f"it (exit code {returncode}).", exit_code=returncode)
        try:
            observation = parse_observation(line)
        except BadResult as exc:
            return RunResult("bad_result", message=f"The snippet's result could not be read: {exc}.",
                             exit_code=returncode)
        return RunResult("ok", observation=observation, exit_code=returncode)


class _EarlyExit(Exception):
    pass


def run_sync(request: RunRequest, sandbox: Sandbox | None = None) -> RunResult:
    """Run one request from synchronous code (the CLI)."""
    return asyncio.run((sandbox or Sandbox()).run(request))
