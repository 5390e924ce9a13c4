"""How a run ended, as the UI side tells it: a :class:`RunResult` built from the zygote's ``done`` message.

The observation bytes are validated here (``wire.read_observation``, every display
text made inert); a run that ended without one (killed, timed out, refused, a
confinement step failed) gets a message that says why in words.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from tutor.safe_text import inert
from tutor.sandbox.inner.compile_cache import BUDGET_BYTES as CACHE_BUDGET  # standard library only
from tutor.sandbox.wire import OUTPUT_BYTES, OUTPUT_FILES, BadResult, Observation, read_observation


@dataclass
class RunResult:
    """How a run ended; ``observation`` is set only when ``status == "ok"``."""

    status: str  # ok | timeout | crashed | no_result | bad_result | failed_to_start | refused
    observation: Observation | None = None
    output: str = ""
    output_truncated: int = 0  # bytes of output not kept
    seconds: float = 0.0
    message: str = ""
    exit_code: int | None = None
    note: str = ""  # something the learner should know although the run went fine (a restarted sandbox)
    tier: str = ""
    exports: bytes = b""  # a judged run's learner half: its exported values (opaque here, read by the judge)
    serving: int = 0  # a judged run's learner half that stays to answer the judge's calls: its run id

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def parse_observation(raw: bytes) -> Observation:
    """A runner's observation line, validated (``wire.read_observation``) with every display text made inert."""
    return read_observation(raw, inert)


def from_done(header: dict, blobs: list[bytes], timeout: float, output_limit: int) -> RunResult:
    """The result of a run from the zygote's ``done`` header and its blobs (result bytes, output bytes)."""
    raw = blobs[0] if len(blobs) > 0 else b""
    output_raw = blobs[1][:output_limit] if len(blobs) > 1 else b""
    output_size = header.get("output_size")
    dropped = max(0, output_size - len(output_raw)) if isinstance(output_size, int) else 0
    seconds = header.get("seconds") if isinstance(header.get("seconds"), (int, float)) else 0.0
    code, sig = header.get("exit"), header.get("signal")
    exit_code = code if isinstance(code, int) else (-sig if isinstance(sig, int) else None)
    refused = header.get("refused")
    if refused:
        result = RunResult("refused", message=f"The sandbox refused this run: {inert(str(refused))[:500]}.")
    elif header.get("setup_error"):
        result = RunResult("failed_to_start", message="The sandbox could not confine this run: "
                                                      f"{inert(str(header['setup_error']))[:500]}.")
    elif header.get("reason") == "timeout":
        result = RunResult("timeout", message=f"The snippet ran longer than its {timeout:g} s limit and "
                                              "was stopped (with any processes it started).")
    elif header.get("reason") == "scratch":
        result = RunResult("crashed", message="The snippet wrote more than the scratch directory's limit "
                                              "(64 MiB or 4096 files) and was stopped.")
    elif header.get("reason") == "compile cache":
        result = RunResult("crashed", message="The snippet wrote more than the compile cache's limit "
                                              f"({CACHE_BUDGET >> 20} MiB) and was stopped.")
    elif header.get("reason") == "output directory":
        result = RunResult("crashed", message="The run wrote more than the output directory's limit "
                                              f"({OUTPUT_BYTES >> 20} MiB or {OUTPUT_FILES:,} files) and was stopped.")
    elif header.get("reason") == "cancelled":
        result = RunResult("crashed", message="The run was cancelled.")
    else:
        result = _interpret(exit_code, raw)
    result.seconds = float(seconds)
    result.output = inert(output_raw.decode("utf-8", "replace"))
    result.output_truncated = dropped
    if result.exit_code is None:
        result.exit_code = exit_code
    return result

def _interpret(returncode: int | None, raw: bytes) -> RunResult:
    if not raw:
        if returncode is not None and returncode < 0:
            name = _signal_name(-returncode)
            why = {"SIGXCPU": " (its CPU-time limit)", "SIGKILL": " (a hard limit, or the system ran out of "
                                                                   "memory)",
                   "SIGSYS": ": it made a system call that the sandbox forbids, and the sandbox refused it "
                             "(the output names the call)"}.get(name, "")
            return RunResult("crashed", message=f"The snippet's process was killed by {name}{why} "
                                                 "before it could be observed.", exit_code=returncode)
        return RunResult("no_result", message="The snippet ended its process before the tutor could observe "
                                               f"it (exit code {returncode}).", exit_code=returncode)
    line, _, exports = raw.partition(b"\n")
    try:
        observation = parse_observation(line)
    except BadResult as exc:
        return RunResult("bad_result", message=f"The snippet's result could not be read: {exc}.",
                         exit_code=returncode)
    return RunResult("ok", observation=observation, exit_code=returncode, exports=exports)


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"
