"""What each learner action reports back: presentation-neutral, the same for every front end.

A report says what the learner said (as it was read), what the sandbox observed,
the first divergence, the misconception, the check and each named test, what was
recorded in the profile and what that unlocked. The front ends (the TUI, plain mode)
render it (see :mod:`tutor.tutoring.presentation`); none of them decides anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tutor.judge.labs import LabTestResult
from tutor.progress.store import AttemptKind
from tutor.tutoring.states import CheckStatus, Outcome, RunStatus
from tutor.tutoring.trace_view import TraceReport

# The policy, written once: what is not recorded, and why.
NOT_RECORDED_UNFINISHED = "The run did not finish, so nothing was recorded."
NOT_RECORDED_UNREADABLE = "Some answers could not be read, so nothing was run and nothing was recorded."
NOT_RECORDED_FILE = "The lab's file could not be read, so nothing was run and nothing was recorded."
NOT_RECORDED_OFF = "Recording is off (an author's check), so nothing was recorded."


@dataclass(frozen=True)
class ModuleRef:
    id: str
    title: str


@dataclass(frozen=True)
class AskRow:
    """One prediction beside its observation."""

    key: str
    question: str
    said: str  # as the judge understood it (canonical spelling), else as typed
    observed: str  # the observation in the same spelling, or why it could not be observed
    correct: bool
    misconception: str = ""


@dataclass(frozen=True)
class Recorded:
    """What the service wrote to the profile for this action."""

    kind: AttemptKind
    correct: bool
    reviewed: bool = False  # a spaced-review card was rated by this attempt


@dataclass(frozen=True)
class RunReport:
    """A prediction, an experiment, a repair or a lab check: one run in the sandbox, judged."""

    module_id: str
    drill_id: str
    kind: AttemptKind
    outcome: Outcome
    said: dict[str, str] = field(default_factory=dict)  # typed answers by ask key; or {"code": ...}
    problems: dict[str, str] = field(default_factory=dict)  # answers that could not be read, by ask key
    status: RunStatus | None = None  # None: nothing was run
    message: str = ""  # why the run did not finish
    rows: tuple[AskRow, ...] = ()
    graded: bool = True  # rows judge this run's prediction (an experiment shows the last answers instead)
    divergence: str = ""
    compile_error: str = ""  # the code did not compile (described): the cause of everything else, said first
    error: str = ""  # what the code raised, described
    check: CheckStatus = CheckStatus.SKIPPED
    check_message: str = ""
    fence: tuple[str, ...] = ()
    tests: tuple[LabTestResult, ...] = ()  # a lab's named tests, in order (a lab's `check:` is the test "check")
    submission_misconception: str = ""  # a lab: the learner's file is a listed wrong submission
    hints: tuple[str, ...] = ()  # a lab: the first failing test's own hints, then the lab's
    output: str = ""
    output_truncated: int = 0
    recorded: Recorded | None = None
    not_recorded: str = ""  # the policy's reason when nothing was recorded
    unlocked: tuple[ModuleRef, ...] = ()
    drill_done: bool = False  # after this action
    trace: TraceReport | None = None  # a traced run's rows (a first-divergence drill's runs; `trace_view.py`)
    views: tuple[dict, ...] = ()  # the drill's declared views of what PyTorch recorded (``wire.views``)
    stages: tuple[str, ...] = ()  # a chained lab: whose code each earlier stage ran (the learner's, or a reference)

    @property
    def finished(self) -> bool:
        return self.status == RunStatus.OK

    @property
    def misconceptions(self) -> tuple[str, ...]:
        revealed = tuple(r.misconception for r in self.rows if r.misconception) if self.graded else ()
        return revealed + ((self.submission_misconception,) if self.submission_misconception else ())

    @property
    def first_failure(self) -> LabTestResult | None:
        return next((t for t in self.tests if not t.passed), None)


@dataclass(frozen=True)
class SymptomsReport:
    """A symptoms-first repair opened: what its run printed, and nothing of what its asks observed.

    The learner diagnoses from this before the source is shown; their answers are then judged
    against the very run this reports on (``TutoringService.submit_prediction``).
    """

    module_id: str
    drill_id: str
    status: RunStatus
    message: str = ""  # why the run did not finish
    output: str = ""  # stdout and stderr, as the sandbox kept them (inert)
    output_truncated: int = 0
    error: str = ""  # the exception the program raised, described ("" when it raised none)
    unlocked: tuple[ModuleRef, ...] = ()  # nothing: opening a drill records nothing

    @property
    def finished(self) -> bool:
        return self.status == RunStatus.OK


@dataclass(frozen=True)
class SnippetReport:
    """``pytorch-tutor run``: any snippet run once in the sandbox; nothing judged, nothing recorded."""

    source: str  # what was run, as the learner named it (a file's path)
    status: RunStatus
    seconds: float
    message: str = ""  # why the run did not finish
    output: str = ""
    output_truncated: int = 0
    variables: tuple[tuple[str, str], ...] = ()  # (name, value described briefly), in binding order
    error: str = ""  # what the code raised, described
    error_type: str = ""
    fence: tuple[str, ...] = ()
    trace: TraceReport | None = None  # `run --trace`: every tensor after every line
    views: tuple[dict, ...] = ()  # `run --view KIND NAME`: each view asked for, in order (``wire/views.py``)

    @property
    def finished(self) -> bool:
        return self.status == RunStatus.OK

    @property
    def clean(self) -> bool:
        """It finished, raised nothing and broke no fence rule."""
        return self.finished and not self.error and not self.fence

    @property
    def verdict(self) -> str:
        if not self.finished:
            return f"did not finish ({self.status})"
        if self.error:
            return f"error ({self.error_type})"
        return "fence rule broken" if self.fence else "ok"


@dataclass(frozen=True)
class ViewReport:
    """A view the learner opened on a name (experiment mode): nothing is judged or recorded."""

    module_id: str
    drill_id: str
    status: RunStatus
    message: str = ""  # why the run did not finish
    view: dict | None = None  # the view, or one that says why it could not be made (``error``)
    error: str = ""  # what the code raised before the view was made, described

    @property
    def finished(self) -> bool:
        return self.status == RunStatus.OK


@dataclass(frozen=True)
class SelfCheckReport:
    module_id: str
    check_id: str
    said: str
    problem: str = ""  # a multiple-choice answer that could not be read: nothing recorded
    correct: bool | None = None  # None for free text: the learner compares with the model answer
    right_answer: str = ""  # the right option, labelled, for a multiple-choice question
    model_answer: str = ""
    points: tuple[str, ...] = ()  # a free-text question's rubric: what a full answer makes (after the answer only)
    needs_rating: bool = False  # free text: the learner rates themselves next
    recorded: Recorded | None = None
    unlocked: tuple[ModuleRef, ...] = ()
    module_done: bool = False


@dataclass(frozen=True)
class PlacementRow:
    """One placement question as the learner sees it afterwards: right or wrong, and why."""

    module_id: str
    question: str
    said: str
    correct: bool
    right_answer: str
    why: str = ""


@dataclass(frozen=True)
class PlacementReport:
    module_id: str
    right: int
    total: int
    passed: bool  # the module tested for is open now
    tested_out: tuple[str, ...] = ()  # the prerequisites now marked as tested out (never "done")
    unlocked: tuple[ModuleRef, ...] = ()
    rows: tuple[PlacementRow, ...] = ()  # every answer, so that a failed placement still teaches
    failed: tuple[str, ...] = ()  # modules whose own questions did not pass: not marked
    held_back: tuple[str, ...] = ()  # passed their own questions, but need a module still not met
