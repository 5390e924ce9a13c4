"""The lesson schema, declared once: every key of a module and of a drill of each kind.

``parse.py`` derives from this table which keys a drill may have (unknown ones are
errors at their position), which it must have, and since which ``format_version``
a key exists; ``lessons/README.md`` documents the same keys. How a value is read
is named by ``read`` (see ``parse.READERS``).

Format 1 has no ``kind:``: a drill with a ``starter`` is a lab, one with a
``solution`` is a repair, anything else a prediction. Format 2 says ``kind:``
(``prediction`` when absent), and adds module ``setup`` and the lab extensions. Format 3 adds a drill's ``variants``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tutor.course.schema import DrillKind

PREDICTION, REPAIR, LAB = DrillKind.PREDICTION, DrillKind.REPAIR, DrillKind.LAB
FIRST_DIVERGENCE = DrillKind.FIRST_DIVERGENCE
ALL = frozenset(DrillKind)
PREDICTS = frozenset({PREDICTION, REPAIR})  # the drills where the learner predicts written asks before running
TRACED = frozenset({FIRST_DIVERGENCE})  # the learner names the line where a contract first fails


@dataclass(frozen=True)
class FieldSpec:
    key: str
    read: str  # a reader in parse.READERS
    required: frozenset[DrillKind] = frozenset()
    allowed: frozenset[DrillKind] = ALL
    since: int = 1  # the first format_version that has this key


def _f(key: str, read: str, required=(), allowed=ALL, since: int = 1) -> FieldSpec:
    return FieldSpec(key, read, frozenset(required), frozenset(allowed), since)


DRILL_FIELDS: tuple[FieldSpec, ...] = (
    _f("id", "id", required=ALL),
    _f("kind", "kind", since=2),
    # format 3: parameters that vary the drill, read before every text that names them (variants.py)
    _f("variants", "variants", allowed=PREDICTS | TRACED, since=3),
    # why a drill has no variants: its mechanism admits no honest variation (a fixed API fact)
    _f("vary", "optional_text", allowed=PREDICTS | TRACED, since=3),
    _f("title", "optional_text"),
    _f("tags", "texts"),
    _f("prompt", "text", required=ALL),
    _f("setup", "code"),
    _f("code", "code", required=PREDICTS | TRACED, allowed=PREDICTS | TRACED),
    _f("starter", "code", required={LAB}, allowed={LAB}),
    _f("ask", "asks", required=PREDICTS, allowed=PREDICTS),
    _f("check", "code", required={REPAIR}, allowed=ALL - TRACED),
    _f("solution", "code", required={REPAIR, LAB} | TRACED, allowed={REPAIR, LAB} | TRACED),
    _f("probe", "code", allowed={REPAIR, LAB}),
    _f("explanation", "text", required=ALL),
    # first-divergence drills, format 2 (divergence_fields.py reads them; before the keys that refer to them)
    _f("trace_function", "trace_function", allowed=TRACED, since=2),
    _f("stages", "stages", allowed=TRACED, since=2),
    _f("contracts", "contracts", required=TRACED, allowed=TRACED, since=2),
    _f("answer", "answer", required=TRACED, allowed=TRACED, since=2),
    _f("hints", "hints", required=ALL),
    _f("wrong_answers", "wrong_answers", required=PREDICTS | TRACED, allowed=PREDICTS | TRACED),
    _f("timeout", "seconds"),
    _f("timeout_reason", "optional_text"),
    _f("gpu_note", "optional_text"),
    _f("needs", "needs"),
    _f("threads", "threads", since=2),  # intra-op threads for this drill's runs (a small op on a busy machine)
    _f("data", "data", since=2),  # files of the course's data/ directory the drill reads (data_files.py)
    _f("views", "views", allowed=PREDICTS, since=2),  # shown after the reveal (view_fields.py reads them)
    # labs, format 2 (lab_fields.py reads them)
    _f("tests", "tests", allowed={LAB}, since=2),
    _f("rules", "rules", allowed={LAB}, since=2),
    # code run apart from the learner's process, with the course's code readable: its UPPER_CASE names
    # reach the learner's process as data, and the judge's process runs it (judge/labs.py)
    _f("fixtures", "code", allowed={LAB}, since=2),
    # labs and repairs: a repair's wrong fixes (repair_rules in lab_fields.py)
    _f("wrong_submissions", "wrong_submissions", allowed={LAB, REPAIR} | TRACED, since=2),
    # a repair diagnosed from what its run printed before its source is shown (tutoring/symptoms.py)
    _f("symptoms_first", "flag", allowed={REPAIR}, since=2),
    _f("files", "files", allowed={LAB}, since=2),
    _f("uses", "uses", allowed={LAB}, since=2),
    _f("show_tests", "flag", allowed={LAB}, since=2),
)
DRILL_KEYS = {spec.key: spec for spec in DRILL_FIELDS}

MODULE_REQUIRED = {"format_version", "module", "drills"}
# `renamed:` {old id: new id}: a drill or self-check renamed since a learner may have progress under the old id
# `rules:` (format 2): the source rules of every lab of the module that declares none of its own
MODULE_OPTIONAL = {1: {"intro", "self_check", "renamed"}, 2: {"intro", "self_check", "setup", "renamed", "rules"},
                   3: {"intro", "self_check", "setup", "renamed", "rules"}}

ASK_REQUIRED, ASK_OPTIONAL = {"kind"}, {"expr", "id", "question", "options", "tolerance", "match", "pattern",
                                        "view", "of", "bases"}  # view/of: format 2 (view_fields.py)
WRONG_REQUIRED, WRONG_OPTIONAL = {"answer", "misconception"}, {"expr", "ask"}
# `points:` a free-text question's rubric: the two to four points its model answer makes (shown after the answer)
SELF_CHECK_REQUIRED, SELF_CHECK_OPTIONAL = {"id", "question", "answer"}, {"options", "correct", "points"}
TEST_REQUIRED, TEST_OPTIONAL = {"name", "check"}, {"probe", "hints"}
RULE_KEYS = {"allow_names", "allow_attributes", "allow_calls", "forbid_names", "forbid_modules", "forbid_attributes",
             "no_loops", "no_comprehensions",
             "no_imports", "max_lines", "max_columns"}
# `code:` a whole submission, or `change:` edits of the solution ({from: text, to: text}, each `from` found once)
WRONG_SUBMISSION_REQUIRED, WRONG_SUBMISSION_OPTIONAL = {"test", "misconception"}, {"code", "change", "files", "says"}
CHANGE_REQUIRED = {"from", "to"}
FILE_REQUIRED = {"name", "starter", "solution"}
USE_REQUIRED = {"lab", "as"}
USE_OPTIONAL = {"change", "as_of"}  # edits of that lab's solution: the stage as this lab expects it (course_code.py)


def infer_kind_v1(data) -> DrillKind:
    """Format 1's rule: the fields present say what the drill is."""
    if "starter" in data:
        return LAB
    if "solution" in data:
        return REPAIR
    return PREDICTION


def keys_for(kind: DrillKind, version: int) -> tuple[set[str], set[str]]:
    """(required, optional) keys of a drill of ``kind`` in ``version``."""
    required = {s.key for s in DRILL_FIELDS if kind in s.required and s.since <= version}
    optional = {s.key for s in DRILL_FIELDS if kind in s.allowed and s.since <= version} - required
    return required, optional


def misplaced(key: str, kind: DrillKind, version: int, explicit_kind: bool) -> str | None:
    """Why ``key`` does not belong in this drill, said in the author's terms (None: it is simply unknown)."""
    spec = DRILL_KEYS.get(key)
    if spec is None:
        return None
    if spec.since > version:
        return f"`{key}` needs format_version: {spec.since} at the top of the file"
    if kind not in spec.allowed:
        kinds = " or ".join(sorted(k.value for k in spec.allowed))
        hint = "" if explicit_kind or version == 1 else f" (this drill has no `kind:`, so it is a prediction)"
        return f"`{key}` goes with kind: {kinds}, not {kind.value}{hint}"
    return None
