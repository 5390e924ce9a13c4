"""Progress of the long stages (`train`, `finetune`) and a Ctrl-C that stops them cleanly.

* :class:`ProgressBar` draws one line on stderr, redrawn in place on a terminal:
  ``train  812/1600 [#########.........]  13.2k tok/s  3m05s left  loss 2.8431``.
  A run told to stop early (``--stop-after``) still counts the schedule's steps, says where it
  stops, and fills the bar (and counts the time left) up to that point:
  ``train  20/1600 (stopping at 40)  [##########..........]  13.2k tok/s  10s left``.
  Off a terminal (a log file, a pipe, CI) it prints the same text as plain lines, one every
  5 % of the run, so a log stays short and readable.
* :class:`StopRequest` is what the training loop asks after every step ("stop now?"). It is
  set by the first Ctrl-C (the second one aborts as usual) or, for a run in the sandbox that
  no terminal signal reaches, by a file the tutor creates (``stop_file``). The loop then ends
  at a step boundary and the stage writes its checkpoint, so `--resume` continues exactly.
* :class:`ProgressFile` / :func:`follow_progress`: a run inside the sandbox writes its steps
  and log lines as JSON lines into the workspace; the tutor reads them back (as data, capped)
  and draws the bar itself.

Torch-free, like the CLI: importing it costs nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections import deque
from typing import Callable, TextIO

BAR_WIDTH = 20
REDRAW_EVERY = 0.1  # seconds between two redraws on a terminal
PLAIN_LINES = 20  # off a terminal: a line every 1/PLAIN_LINES of the run
RATE_WINDOW = 20  # steps the rate and the time left are measured over


def duration(seconds: float) -> str:
    """A short human duration: 45s, 3m05s, 1h02m."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class ProgressBar:
    """Steps, tokens/s, the time left and the latest loss of a loop of `total` steps; `stop_at`
    is the step this invocation ends at when that comes before `total` (None: it runs to the end)."""

    def __init__(self, label: str, total: int, tokens_per_step: int, *, first_step: int = 0,
                 stop_at: int | None = None, stream: TextIO | None = None, tty: bool | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.label, self.total, self.tokens_per_step = label, total, tokens_per_step
        self.stop_at = stop_at if stop_at is not None and stop_at < total else None
        self.end = total if self.stop_at is None else self.stop_at  # where this run's bar is full
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.clock = clock
        # (step, time) of the last steps; the first point is the first update, so the set-up before
        # the loop (loading data, building the model) never counts as training time
        self.times: deque[tuple[int, float]] = deque(maxlen=RATE_WINDOW + 1)
        self.step, self.loss, self.first_step = first_step, None, first_step
        self.every = max(1, (self.end - first_step) // PLAIN_LINES)
        self.drawn_at = float("-inf")
        self.drawn = False  # a terminal line is on screen (a log line must clear it first)

    def rate(self) -> float | None:
        """Steps per second over the last RATE_WINDOW steps, None before two points."""
        if len(self.times) < 2:
            return None
        (s0, t0), (s1, t1) = self.times[0], self.times[-1]
        return (s1 - s0) / (t1 - t0) if s1 > s0 and t1 > t0 else None

    def text(self) -> str:
        width = len(str(self.total))
        done = min(1.0, self.step / self.end) if self.end else 1.0
        filled = int(done * BAR_WIDTH)
        counter = f"{self.label} {self.step:>{width}}/{self.total}"
        if self.stop_at is not None:
            counter += f" (stopping at {self.stop_at})"
        parts = [counter, "[" + "#" * filled + "." * (BAR_WIDTH - filled) + "]"]
        rate = self.rate()
        if rate:
            parts.append(f"{rate * self.tokens_per_step / 1000:.1f}k tok/s")
            parts.append(f"{duration(max(0, self.end - self.step) / rate)} left")
        if self.loss is not None:
            parts.append(f"loss {self.loss:.4f}")
        return "  ".join(parts)

    def update(self, step: int, loss: float | None, now: float | None = None) -> None:
        self.step, self.loss = step, loss if loss is None else float(loss)
        self.times.append((step, self.clock() if now is None else now))
        if self.tty:
            if self.clock() - self.drawn_at >= REDRAW_EVERY or step >= self.end:
                self._draw()
        elif (step - self.first_step) % self.every == 0 or step >= self.end:
            print(self.text(), file=self.stream, flush=True)

    def log(self, line: str) -> None:
        """A line of the stage's own log, printed above the bar."""
        if self.tty and self.drawn:
            self.stream.write("\r\x1b[K")
        print(line, file=self.stream, flush=True)
        if self.tty and self.drawn:
            self._draw()

    def close(self) -> None:
        if self.tty and self.drawn:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False

    def _draw(self) -> None:
        self.stream.write("\r\x1b[K" + self.text())
        self.stream.flush()
        self.drawn, self.drawn_at = True, self.clock()


class StopRequest:
    """Asked after every step: should the loop stop here (a checkpoint follows)?"""

    def __init__(self, stop_file: str | os.PathLike | None = None):
        self.stop_file = os.fspath(stop_file) if stop_file else None
        self.requested = False

    def __call__(self) -> bool:
        if not self.requested and self.stop_file and os.path.lexists(self.stop_file):
            self.requested = True
        return self.requested


@contextlib.contextmanager
def stop_on_interrupt(stop: StopRequest, say: Callable[[str], None]):
    """The first Ctrl-C sets `stop` (the loop ends at the next step boundary); a second one
    raises KeyboardInterrupt as usual. Only in the main thread, where signals are delivered."""
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def first(signum, frame):
        stop.requested = True
        say("stopping after this step to write a checkpoint (Ctrl-C again to abort without one)")
        signal.signal(signal.SIGINT, signal.default_int_handler)

    previous = signal.signal(signal.SIGINT, first)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


class StepReporter:
    """The `on_step(step, loss) -> stop?` a training loop calls: updates a sink, asks `stop`."""

    def __init__(self, sink, stop: StopRequest | None = None):
        self.sink, self.stop = sink, stop or StopRequest()

    def __call__(self, step: int, loss: float) -> bool:
        self.sink.update(step, loss)
        return self.stop()


# ---------------------------------------------------------------- across the sandbox's wall

MAX_EVENT = 4096  # bytes of one progress line the tutor accepts
MAX_READ = 1 << 20  # bytes read per poll


class ProgressFile:
    """Inside the sandbox: the same `update` / `log` as a ProgressBar, written as JSON lines."""

    def __init__(self, path: str | os.PathLike, label: str, total: int, tokens_per_step: int, first_step: int = 0,
                 stop_at: int | None = None):
        self.file = open(path, "a", encoding="utf-8", buffering=1)
        self._write({"start": label, "total": total, "tokens_per_step": tokens_per_step, "first_step": first_step,
                     "stop_at": stop_at})

    def update(self, step: int, loss: float | None) -> None:
        self._write({"step": step, "loss": loss, "t": time.monotonic()})

    def log(self, line: str) -> None:
        self._write({"log": line[:1000]})

    def close(self) -> None:
        self.file.close()

    def _write(self, event: dict) -> None:
        self.file.write(json.dumps(event) + "\n")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


class ProgressFollower:
    """The tutor's side: reads new progress lines from a file the sandboxed run writes and
    draws them. Everything in the file came from untrusted code: each line is capped, parsed
    as JSON, its fields type-checked, and text goes through `clean` before it is shown."""

    def __init__(self, read_new: Callable[[int], bytes],
                 make_bar: Callable[[str, int, int, int, int | None], ProgressBar],
                 clean: Callable[[str], str], say: Callable[[str], None]):
        self.read_new, self.make_bar, self.clean, self.say = read_new, make_bar, clean, say
        self.pending = b""
        self.bar: ProgressBar | None = None
        self.offset = 0

    def poll(self) -> None:
        data = self.read_new(self.offset)
        self.offset += len(data)
        lines = (self.pending + data).split(b"\n")
        self.pending = lines.pop()
        if len(self.pending) > MAX_EVENT:
            self.pending = b""
        for raw in lines:
            if len(raw) <= MAX_EVENT:
                self._event(raw)

    def _event(self, raw: bytes) -> None:
        try:
            event = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return
        if not isinstance(event, dict):
            return
        if isinstance(event.get("start"), str) and all(isinstance(event.get(k), int) for k in
                                                       ("total", "tokens_per_step", "first_step")):
            self.close()
            stop_at = event.get("stop_at")
            self.bar = self.make_bar(self.clean(event["start"])[:40], max(0, event["total"]),
                                     max(0, event["tokens_per_step"]), max(0, event["first_step"]),
                                     max(0, stop_at) if isinstance(stop_at, int) and not isinstance(stop_at, bool) else None)
        elif isinstance(event.get("log"), str):
            (self.bar.log if self.bar else self.say)(self.clean(event["log"][:1000]))
        elif self.bar and isinstance(event.get("step"), int):
            loss, when = event.get("loss"), event.get("t")
            # the run's own clock (CLOCK_MONOTONIC is the host's too): polls arrive in bursts
            self.bar.update(event["step"], loss if _number(loss) else None, when if _number(when) else None)

    def close(self) -> None:
        if self.bar:
            self.bar.close()
            self.bar = None
