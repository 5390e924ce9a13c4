"""The states a learner action passes through, as types rather than loose strings.

Each is a ``StrEnum``: its members are the very strings the sandbox sends and the
profile stores, so reading them in (``RunStatus(result.status)``) is a check and
writing them out changes nothing on disk or on the wire.
"""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    """How a sandbox run ended."""

    OK = "ok"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    NO_RESULT = "no_result"
    BAD_RESULT = "bad_result"
    FAILED_TO_START = "failed_to_start"
    REFUSED = "refused"

    @classmethod
    def read(cls, text: str) -> RunStatus:
        """An unknown status from a newer sandbox reads as a run that gave no result."""
        try:
            return cls(text)
        except ValueError:
            return cls.NO_RESULT


class CheckStatus(StrEnum):
    """What a drill's check (or a lab's tests) said."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"  # no check, or the run never reached it
    NOT_RUN = "not run"  # the code did not compile: what the check said is about names never bound


class Outcome(StrEnum):
    """Where an action left the learner: each front end words the next step its own way."""

    UNREADABLE = "unreadable"  # an answer could not be read: nothing ran, nothing recorded
    RECALL_NEEDED = "recall needed"  # a review with empty or unchanged answers: nothing ran, nothing rated
    FRESH_INSTANCE = "fresh instance"  # a variant drill's instance whose answers were shown: predict a fresh one
    FILE_UNREADABLE = "file unreadable"  # a lab's file is missing, unreadable or not UTF-8: nothing ran
    NOT_FINISHED = "not finished"  # the run did not finish: nothing recorded
    VERIFIED = "verified"  # the prediction was right
    SYMPTOM_FOUND = "symptom found"  # a repair drill's symptom predicted; the repair is still to do
    NOT_YET = "not yet"  # the prediction was wrong
    OBSERVED = "observed"  # an experiment ran: compare it with the first run
    REPAIRED = "repaired"  # the repair passes and the drill is done
    REPAIRED_PREDICT_NEXT = "repaired, predict next"  # the repair passes; the symptom is still to predict
    CHECK_FAILS = "check fails"  # a repair or a lab does not pass yet
    SOLVED = "solved"  # a lab's tests all pass
