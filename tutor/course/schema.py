"""The lesson schema's types: what a module file turns into once it has been checked.

The declared field table (which keys a drill of each kind takes, which are
required, since which format) is ``fields.py``; reading a marked YAML tree into
these types, with every problem's file:line:column, is ``parse.py``.
``parse_module`` is re-exported here for the callers that have always used it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from tutor.course.divergence_fields import FirstDivergence
from tutor.course.reader import ID_RULE

if TYPE_CHECKING:
    from tutor.course.variants import Variants

FORMAT_VERSION = 3  # what this tutor writes and documents
# format 1 (kinds inferred, no lab extensions) and 2 (no variants) still load unchanged
READABLE_VERSIONS = (1, 2, 3)
DEFAULT_TIMEOUT = 10.0
MAX_TIMEOUT = 120.0
ERROR_ASK_KEY = "raises"  # the key of an ask that observes the code's own exception

# Module, drill, self-check and part ids end up in file names (a lab's workspace
# file), profile keys and the screen, and they come from untrusted lesson packs:
# one safe shape for all of them, so that no id can name a path ("../x", "/x").
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# A course helper, a lab's extra file or a chained stage is imported by this name inside the sandbox.
MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}(\.[A-Za-z_][A-Za-z0-9_]{0,63}){0,3}")


def is_safe_id(value: str) -> bool:
    return bool(SAFE_ID.fullmatch(value)) and ".." not in value


def file_stem(drill_id: str) -> str:
    """The form of a drill id used in file names (``scatter-add`` and ``scatter_add`` collide here)."""
    return drill_id.replace("-", "_").lower()


class DrillKind(StrEnum):
    """What the learner does: predict what code does, repair seeded code, or write a lab."""

    PREDICTION = "prediction"
    REPAIR = "repair"
    LAB = "lab"
    FIRST_DIVERGENCE = "first-divergence"  # where does a contract first fail? then repair (divergence_fields.py)


@dataclass(frozen=True)
class View:
    """A view a drill shows after the reveal: a storage, an autograd graph, or a registered model."""

    kind: str  # storage | graph | module
    of: str  # the name it views, bound by the code
    optimizer: str = ""  # a module view: the optimizer whose groups are shown against the model


@dataclass(frozen=True)
class Ask:
    """One prediction the learner makes: what ``expr`` evaluates to, typed by ``kind``."""

    key: str
    expr: str | None
    kind: str
    question: str
    options: tuple[str, ...] = ()
    tolerance: float | None = None
    match: str = "case-insensitive"  # text asks: exact | case-insensitive | regex (see tutor/judge/text_match.py)
    pattern: str = ""  # the regex a text answer must match in full, with match: regex
    view: View | None = None  # format 2: a view shown with this ask after the reveal
    # an error ask: documented base classes of the exception a learner may name instead (RuntimeError for
    # torch's TorchRuntimeError), where the subclass's name is trivia; `check` proves each is a base
    bases: tuple[str, ...] = ()

    @property
    def observes_code_error(self) -> bool:
        return self.kind == "error" and self.expr is None


@dataclass(frozen=True)
class WrongAnswer:
    """A plausible wrong prediction and the misconception it reveals."""

    ask: str
    answer: str
    misconception: str


RULES_TEST = "source-rules"  # the name under which a lab's source rules report, like a test


@dataclass(frozen=True)
class LabTest:
    """One named test of a lab, reported on its own (pass/fail and its message)."""

    name: str
    check: str  # assertions, run in the judge's process
    probe: str = ""  # run in the learner's process first: binds what this test's check needs
    hints: tuple[str, ...] = ()  # shown (before the lab's own hints) when this is the first failing test
    line: int = 1


@dataclass(frozen=True)
class SourceRules:
    """Restrictions on the learner's source, checked on its syntax tree in the judge's process."""

    allow_names: tuple[str, ...] | None = None  # free names the code may read (None: any)
    allow_attributes: tuple[str, ...] | None = None
    allow_calls: tuple[str, ...] | None = None  # dotted names, e.g. torch.arange, len
    forbid_names: tuple[str, ...] | None = None  # names (and modules) the code may not use or import
    forbid_modules: tuple[str, ...] | None = None  # dotted modules (and their submodules) it may not import
    forbid_attributes: tuple[str, ...] | None = None  # attributes and methods it may not use (`x.argmin()`)
    no_loops: bool = False
    no_comprehensions: bool = False
    no_imports: bool = False
    max_lines: int | None = None  # non-blank, non-comment lines
    max_columns: int | None = None

    def to_wire(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items() if v not in (None, False)}


@dataclass(frozen=True)
class WrongSubmission:
    """A lab submission that must fail (``check`` proves it) and the misconception it reveals."""

    code: str
    test: str  # the test expected to reject it (or ``source-rules``)
    misconception: str
    files: tuple[tuple[str, str], ...] = ()  # a multi-file lab: other files' code (name, code)
    says: str = ""  # words the named test's message must contain: what the learner is told


@dataclass(frozen=True)
class LabFile:
    """Another file of a multi-file lab: importable by its module name from the learner's main file."""

    name: str  # module name; the workspace file is <name>.py
    starter: str
    solution: str


@dataclass(frozen=True)
class StageUse:
    """A chained lab imports an earlier lab's file (the learner's, or that stage's reference)."""

    lab: str  # "<module>/<drill>", or "<drill>" in the same module
    name: str  # the module name it is imported as
    # {from, to} edits of that lab's solution: the stage as this lab expects it when the learner uses the
    # reference (a later lab that extends an earlier stage's file, as 35's KV cache extends 32's model)
    changes: tuple[tuple[str, str], ...] = ()
    as_of: str = ""  # a later lab whose `change:` of the same stage applies here too ("35/write-the-kv-cache")


@dataclass(frozen=True)
class Stage:
    """A chained lab's earlier stage, resolved by the loader: where the learner's file is, and its reference."""

    name: str  # the module name it is imported as
    module_id: str
    drill_id: str
    reference: str  # that lab's solution (with the use's changes): the fallback "use the reference for this stage"


@dataclass(frozen=True)
class DataRef:
    """A file of the course's data/ directory a drill reads, with where its name is written (``data_files.py``)."""

    name: str
    line: int
    column: int


@dataclass(frozen=True)
class Drill:
    id: str
    title: str
    prompt: str
    code: str
    asks: tuple[Ask, ...]
    explanation: str
    hints: tuple[str, ...]
    wrong_answers: tuple[WrongAnswer, ...]
    setup: str = ""
    check: str = ""
    solution: str = ""
    timeout: float = DEFAULT_TIMEOUT
    timeout_reason: str = ""
    threads: int = 0  # intra-op threads for this drill's runs (0: the sandbox's); never more than it has
    vary: str = ""  # why this drill declares no variants (format 3): what about it admits no honest variation
    # A lab's fixtures: what its tests compute with the reference, never run in the learner's process
    # (whose sandbox hides the modules its rules forbid): its UPPER_CASE names reach that process as data
    fixtures: str = ""
    tags: tuple[str, ...] = ()
    gpu_note: str = ""
    # Runs after the code in the learner's process and binds what a judged check needs
    # from the learner's functions and classes (those never reach the judge's process).
    probe: str = ""
    starter: str = ""  # an exercise's starting file, which the learner completes
    needs: tuple[str, ...] = ()  # sandbox grants beyond the default: processes, exec, loopback
    line: int = 1
    kind: DrillKind = DrillKind.PREDICTION
    module_setup: str = ""  # the module's shared `setup:`, run before the drill's own
    # format 2, labs only
    tests: tuple[LabTest, ...] = ()
    rules: SourceRules | None = None
    wrong_submissions: tuple[WrongSubmission, ...] = ()
    files: tuple[LabFile, ...] = ()
    uses: tuple[StageUse, ...] = ()
    show_tests: bool = False  # show a failing test's source line to the learner (the author asks for it)
    # format 2, repairs: the learner sees what the run printed, diagnoses it, and only then gets the source
    symptoms_first: bool = False
    data: tuple[DataRef, ...] = ()  # format 2: files of the course's data/ this drill reads in the sandbox
    views: tuple[View, ...] = ()  # format 2: views shown after the reveal (an ask's own `view:` is on the ask)
    # filled in by the course loader: the course's helper modules (name, source) and the resolved `uses`
    helpers: tuple[tuple[str, str], ...] = ()
    stages: tuple[Stage, ...] = ()
    divergence: FirstDivergence | None = None  # a first-divergence drill's contracts, stages and answer
    # format 3: the parameters that vary the drill (variants.Variants); its texts then name them as {{name}}
    # and an attempt sees variants.present_drill_instance(drill, seed), whose `instance` says what was drawn
    variants: "Variants | None" = field(default=None, compare=False)
    instance: tuple = ()
    # a variant drill as loaded is its base instance (so every path that never draws still runs real code);
    # `template` keeps the unrendered texts that present_drill_instance renders for another instance
    template: "Drill | None" = field(default=None, compare=False, repr=False)

    @property
    def is_exercise(self) -> bool:
        """A lab: the learner writes code in their own file until the check passes."""
        return self.kind is DrillKind.LAB

    @property
    def is_repair(self) -> bool:
        """A seeded-bug drill: the code is wrong and the learner repairs it (a first-divergence drill is one)."""
        return self.kind in (DrillKind.REPAIR, DrillKind.FIRST_DIVERGENCE)

    @property
    def is_first_divergence(self) -> bool:
        """Where does a contract first fail? The learner names the line, then repairs it."""
        return self.kind is DrillKind.FIRST_DIVERGENCE

    @property
    def test_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tests)

    @property
    def all_views(self) -> tuple[View, ...]:
        """Every view the drill declares: each ask's, then the drill's, each once."""
        out: list[View] = []
        for spec in [a.view for a in self.asks if a.view is not None] + list(self.views):
            if spec not in out:
                out.append(spec)
        return tuple(out)

    def ask(self, key: str) -> Ask:
        return next(a for a in self.asks if a.key == key)


@dataclass(frozen=True)
class SelfCheck:
    """An interview-style question closing a module."""

    id: str
    question: str
    answer: str
    options: tuple[str, ...] = ()
    correct: int | None = None  # index into options for multiple choice
    # a free-text question's rubric: the points its model answer makes, shown after the learner answers
    points: tuple[str, ...] = ()

    @property
    def is_choice(self) -> bool:
        return bool(self.options)


@dataclass(frozen=True)
class Module:
    id: str
    file: str
    intro: str
    drills: tuple[Drill, ...]
    self_checks: tuple[SelfCheck, ...]
    format_version: int = FORMAT_VERSION
    setup: str = ""  # shared by every drill of the module (format 2)
    # (old id, new id): items renamed since learners may hold progress under the old id (``progress.store``
    # moves their rows to the new id when a session opens the course)
    renamed: tuple[tuple[str, str], ...] = ()
    rules: SourceRules | None = None  # the module's `rules:`, its labs' unless one declares its own
    # the parsed-module cache's key of the file this came from (its bytes, its shown name, the parser's
    # code): what is derived from the module alone (the giveaway check) is cached under it too
    source_key: str = field(default="", compare=False, repr=False)

    def drill(self, drill_id: str) -> Drill | None:
        return next((d for d in self.drills if d.id == drill_id), None)


def parse_module(data, filename: str):
    """Turn a loaded YAML tree into a :class:`Module`, or return the errors found (see ``parse.py``)."""
    from tutor.course.parse import parse_module as parse

    return parse(data, filename)


__all__ = ["Ask", "DataRef", "View", "Drill", "DrillKind", "LabFile", "LabTest", "Module", "SelfCheck", "SourceRules", "Stage", "StageUse",
           "WrongAnswer", "WrongSubmission", "FORMAT_VERSION", "READABLE_VERSIONS", "ID_RULE", "SAFE_ID",
           "is_safe_id", "file_stem", "parse_module"]
