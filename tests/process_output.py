"""Every line a child process prints, kept as it comes, and waits on those lines (never timed sleeps).

The browser tests' ``serve-ui`` and the hub test's ``jupyterhub`` both follow a server this way: a
thread reads the pipe into ``output`` and wakes whoever waits; the pipe's end is kept as an empty
line, so a wait ends at once with what was printed when the process dies instead of at its timeout.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time


class FollowsOutput:
    """Mixed into a class that starts ``self.process`` with ``stdout=PIPE, text=True`` and then calls
    ``self.follow_output(name)``."""

    process: subprocess.Popen
    wait_timeout = 60.0  # seconds a wait gives the process by default (a hub starting under load needs more)

    def follow_output(self, name: str) -> None:
        self.output_name = name  # how a failed wait names the process
        self.output: list[str] = []
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._changed:
                self.output.append(line)
                self._changed.notify_all()
        with self._changed:
            self.output.append("")  # the end: nothing more will come
            self._changed.notify_all()

    def wait_for_line(self, pattern: str, after: int = 0, timeout: float | None = None, times: int = 1) -> re.Match[str]:
        """The ``times``-th line from ``after`` on that matches ``pattern``, once the process has printed it."""
        wanted, seen, found = re.compile(pattern), after, 0
        deadline = time.monotonic() + (self.wait_timeout if timeout is None else timeout)
        with self._changed:
            while True:
                for line in self.output[seen:]:
                    if (match := wanted.search(line)) and (found := found + 1) == times:
                        return match
                    if line == "":
                        raise RuntimeError(f"{self.output_name} ended before printing {pattern!r}:\n" + self.log())
                seen = len(self.output)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"{self.output_name} never printed {pattern!r}:\n" + self.log())
                self._changed.wait(left)

    def lines(self, containing: str) -> list[str]:
        with self._changed:
            return [line for line in self.output if containing in line]

    def log(self, last: int = 200) -> str:
        with self._changed:
            return "".join(self.output[-last:])
