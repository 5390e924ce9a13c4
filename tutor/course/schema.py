"""The lesson schema: what a module file may contain, checked strictly.

Validation collects every problem it finds (each with file:line:column and the
field's dotted path) rather than stopping at the first, so an author fixes a
file in one pass. Unknown keys are errors: a typo such as ``hint:`` for
``hints:`` must not silently drop content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tutor.course.errors import LessonError
from tutor.course.yaml_source import Mark, MarkedDict, MarkedList
from tutor.judge.kinds import KINDS

FORMAT_VERSION = 1
DEFAULT_TIMEOUT = 10.0
MAX_TIMEOUT = 120.0
ERROR_ASK_KEY = "raises"  # the key of an ask that observes the code's own exception

# Module, drill, self-check and part ids end up in file names (a lab's workspace
# file), profile keys and the screen, and they come from untrusted lesson packs:
# one safe shape for all of them, so that no id can name a path ("../x", "/x").
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
ID_RULE = "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit, and no '..'"


def is_safe_id(value: str) -> bool:
    return bool(SAFE_ID.fullmatch(value)) and ".." not in value


def file_stem(drill_id: str) -> str:
    """The form of a drill id used in file names (``scatter-add`` and ``scatter_add`` collide here)."""
    return drill_id.replace("-", "_").lower()


@dataclass(frozen=True)
class Ask:
    """One prediction the learner makes: what ``expr`` evaluates to, typed by ``kind``."""

    key: str
    expr: str | None
    kind: str
    question: str
    options: tuple[str, ...] = ()
    tolerance: float | None = None

    @property
    def observes_code_error(self) -> bool:
        return self.kind == "error" and self.expr is None


@dataclass(frozen=True)
class WrongAnswer:
    """A plausible wrong prediction and the misconception it reveals."""

    ask: str
    answer: str
    misconception: str


# What a drill may declare under `needs:`; the sandbox grants exactly that (see tutor/sandbox/protocol.py).
SANDBOX_NEEDS = ("processes", "exec", "loopback")


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
    tags: tuple[str, ...] = ()
    gpu_note: str = ""
    # Runs after the code in the learner's process and binds what a judged check needs
    # from the learner's functions and classes (those never reach the judge's process).
    probe: str = ""
    starter: str = ""  # an exercise's starting file, which the learner completes
    needs: tuple[str, ...] = ()  # sandbox grants beyond the default: processes, exec, loopback
    line: int = 1

    @property
    def is_exercise(self) -> bool:
        """A lab: the learner writes code in their own file until the check passes."""
        return bool(self.starter)

    @property
    def is_repair(self) -> bool:
        """A seeded-bug drill: the code is wrong and the learner repairs it."""
        return bool(self.solution) and not self.starter

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

    def drill(self, drill_id: str) -> Drill | None:
        return next((d for d in self.drills if d.id == drill_id), None)


@dataclass
class _Reader:
    """Walks the marked YAML tree, recording errors instead of raising."""

    filename: str
    errors: list[LessonError] = field(default_factory=list)

    def error(self, mark: Mark, path: str, message: str) -> None:
        self.errors.append(LessonError(self.filename, mark[0], mark[1], path, message))

    def mapping(self, data: Any, path: str, mark: Mark, required: set[str], optional: set[str]) -> MarkedDict | None:
        if not isinstance(data, MarkedDict):
            self.error(mark, path, f"expected a mapping, got {_type_name(data)}")
            return None
        for key in data:
            if key not in required and key not in optional:
                allowed = ", ".join(sorted(required | optional))
                self.error(data.key_marks[key], _join(path, key), f"unknown key (allowed: {allowed})")
        for key in sorted(required - set(data)):
            self.error(data.mark, _join(path, key), "required key is missing")
        return data

    def key_mark(self, data: MarkedDict, key: str) -> Mark:
        return data.key_marks.get(key, data.mark)

    def text(self, data: MarkedDict, key: str, path: str, default: str | None = None) -> str:
        if key not in data:
            return default if default is not None else ""
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.error(self.key_mark(data, key), _join(path, key), f"expected text, got {_type_name(value)}")
            return ""
        value = str(value)
        if not value.strip() and default is None:
            self.error(self.key_mark(data, key), _join(path, key), "must not be empty")
        return value

    def identifier(self, data: MarkedDict, key: str, path: str) -> str:
        """Required text that must also be a safe id (see ``SAFE_ID``)."""
        value = self.text(data, key, path)
        if value and not is_safe_id(value):
            self.error(self.key_mark(data, key), _join(path, key), f"id {value[:80]!r} is not allowed: {ID_RULE}")
            return ""
        return value

    def sequence(self, data: MarkedDict, key: str, path: str) -> MarkedList:
        value = data.get(key)
        if value is None:
            return _empty_list()
        if not isinstance(value, MarkedList):
            self.error(self.key_mark(data, key), _join(path, key), f"expected a list, got {_type_name(value)}")
            return _empty_list()
        return value

    def text_list(self, data: MarkedDict, key: str, path: str) -> tuple[str, ...]:
        items = self.sequence(data, key, path)
        out = []
        for i, item in enumerate(items):
            if isinstance(item, bool) or not isinstance(item, (str, int, float)) or not str(item).strip():
                self.error(items.item_marks[i], f"{_join(path, key)}[{i}]", "expected non-empty text")
            else:
                out.append(str(item))
        return tuple(out)

    def code(self, data: MarkedDict, key: str, path: str, mode: str = "exec") -> str:
        source = self.text(data, key, path, default="")
        if source.strip():
            try:
                compile(source, f"<{key}>", mode)
            except SyntaxError as exc:
                line, col = self.key_mark(data, key)
                # A block scalar's text starts on the line after its key.
                offset = (exc.lineno or 1) if "\n" in source.rstrip("\n") or source.endswith("\n") else 0
                self.errors.append(
                    LessonError(self.filename, line + offset, col, _join(path, key), f"Python syntax error: {exc.msg}")
                )
        return source


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_name(value: Any) -> str:
    if isinstance(value, MarkedDict):
        return "a mapping"
    if isinstance(value, MarkedList):
        return "a list"
    if value is None:
        return "nothing"
    return type(value).__name__


def _empty_list() -> MarkedList:
    items = MarkedList()
    items.item_marks = []
    return items


_MODULE_KEYS = {"format_version", "module", "drills"}
_MODULE_OPTIONAL = {"intro", "self_check"}
_DRILL_KEYS = {"id", "prompt", "code", "ask", "explanation", "hints", "wrong_answers"}
_DRILL_OPTIONAL = {"title", "setup", "check", "solution", "timeout", "timeout_reason", "tags", "gpu_note", "needs",
                   "probe"}
# An exercise (a lab) has a starter file instead of code to predict about.
_EXERCISE_KEYS = {"id", "prompt", "starter", "check", "solution", "explanation", "hints"}
_EXERCISE_OPTIONAL = {"title", "setup", "timeout", "timeout_reason", "tags", "gpu_note", "needs", "probe"}
_ASK_KEYS = {"kind"}
_ASK_OPTIONAL = {"expr", "id", "question", "options", "tolerance"}
_WRONG_KEYS = {"answer", "misconception"}
_WRONG_OPTIONAL = {"expr", "ask"}
_SELF_CHECK_KEYS = {"id", "question", "answer"}
_SELF_CHECK_OPTIONAL = {"options", "correct"}


def parse_module(data: Any, filename: str) -> tuple[Module | None, list[LessonError]]:
    """Turn a loaded YAML tree into a :class:`Module`, or return the errors found."""
    reader = _Reader(filename)
    root = reader.mapping(data, "", (1, 1), _MODULE_KEYS, _MODULE_OPTIONAL)
    if root is None:
        return None, reader.errors
    version = root.get("format_version")
    if "format_version" in root and version != FORMAT_VERSION:
        reader.error(
            reader.key_mark(root, "format_version"),
            "format_version",
            f"this tutor reads format_version {FORMAT_VERSION}, the file says {version!r}; "
            "update pytorch-tutor or migrate the file",
        )
    module_id = reader.identifier(root, "module", "")
    intro = reader.text(root, "intro", "", default="")

    drills: list[Drill] = []
    drill_items = reader.sequence(root, "drills", "")
    if "drills" in root and not drill_items:
        reader.error(reader.key_mark(root, "drills"), "drills", "a module needs at least one drill")
    seen: dict[str, tuple[str, int]] = {}  # file_stem(id) -> (id, line): ids may not collide as file names
    for i, item in enumerate(drill_items):
        drill = _parse_drill(reader, item, f"drills[{i}]", drill_items.item_marks[i])
        if drill is None:
            continue
        stem = file_stem(drill.id)
        if stem in seen:
            first_id, first_line = seen[stem]
            same = "duplicate drill id" if first_id == drill.id else f"drill id {drill.id!r} names the same file as"
            reader.error(drill_items.item_marks[i], f"drills[{i}].id",
                         f"{same} {first_id!r} (first at line {first_line})")
        seen.setdefault(stem, (drill.id, drill.line))
        drills.append(drill)

    self_checks: list[SelfCheck] = []
    check_items = reader.sequence(root, "self_check", "")
    seen_checks: set[str] = set()
    for i, item in enumerate(check_items):
        check = _parse_self_check(reader, item, f"self_check[{i}]", check_items.item_marks[i])
        if check is None:
            continue
        if check.id in seen_checks:
            reader.error(check_items.item_marks[i], f"self_check[{i}].id", f"duplicate self-check id {check.id!r}")
        seen_checks.add(check.id)
        self_checks.append(check)

    if reader.errors:
        return None, reader.errors
    return Module(module_id, filename, intro, tuple(drills), tuple(self_checks), FORMAT_VERSION), []


def _parse_drill(reader: _Reader, item: Any, path: str, mark: Mark) -> Drill | None:
    exercise = isinstance(item, MarkedDict) and "starter" in item
    required, optional = (_EXERCISE_KEYS, _EXERCISE_OPTIONAL) if exercise else (_DRILL_KEYS, _DRILL_OPTIONAL)
    data = reader.mapping(item, path, mark, required, optional)
    if data is None:
        return None
    before = len(reader.errors)
    drill_id = reader.identifier(data, "id", path)
    setup = reader.code(data, "setup", path)
    code = reader.code(data, "code", path)
    starter = reader.code(data, "starter", path)
    check = reader.code(data, "check", path)
    solution = reader.code(data, "solution", path)
    probe = reader.code(data, "probe", path)
    if probe.strip() and not (solution.strip() or starter.strip()):
        reader.error(reader.key_mark(data, "probe"), f"{path}.probe",
                     "a probe goes with a repair drill or a lab (its check runs apart from the learner's code)")
    if exercise and not starter.strip():
        reader.error(reader.key_mark(data, "starter"), f"{path}.starter", "must not be empty")
    if "code" in data and not code.strip():
        reader.error(reader.key_mark(data, "code"), f"{path}.code", "must not be empty")

    asks: list[Ask] = []
    ask_items = reader.sequence(data, "ask", path)
    if "ask" in data and not ask_items:
        reader.error(reader.key_mark(data, "ask"), f"{path}.ask", "a drill asks for at least one prediction")
    for i, ask_item in enumerate(ask_items):
        ask = _parse_ask(reader, ask_item, f"{path}.ask[{i}]", ask_items.item_marks[i])
        if ask is None:
            continue
        if any(a.key == ask.key for a in asks):
            reader.error(ask_items.item_marks[i], f"{path}.ask[{i}]",
                         f"two asks share the key {ask.key!r}; give one an `id`")
        asks.append(ask)

    hints = reader.text_list(data, "hints", path)
    if "hints" in data and not hints:
        reader.error(reader.key_mark(data, "hints"), f"{path}.hints", "give at least one hint")

    wrong: list[WrongAnswer] = []
    wrong_items = reader.sequence(data, "wrong_answers", path)
    if "wrong_answers" in data and not wrong_items:
        reader.error(reader.key_mark(data, "wrong_answers"), f"{path}.wrong_answers",
                     "list at least one plausible wrong answer")
    for i, wrong_item in enumerate(wrong_items):
        w = _parse_wrong(reader, wrong_item, f"{path}.wrong_answers[{i}]", wrong_items.item_marks[i], asks)
        if w is not None:
            wrong.append(w)

    timeout = DEFAULT_TIMEOUT
    if "timeout" in data:
        raw = data["timeout"]
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 < raw <= MAX_TIMEOUT:
            reader.error(reader.key_mark(data, "timeout"), f"{path}.timeout",
                         f"expected seconds between 0 and {MAX_TIMEOUT:g}")
        else:
            timeout = float(raw)
    timeout_reason = reader.text(data, "timeout_reason", path, default="")
    if timeout > DEFAULT_TIMEOUT and not timeout_reason.strip():
        reader.error(reader.key_mark(data, "timeout"), f"{path}.timeout",
                     f"a limit above {DEFAULT_TIMEOUT:g} s needs a `timeout_reason`")
    if solution.strip() and not check.strip():
        reader.error(reader.key_mark(data, "solution"), f"{path}.solution",
                     "a repair drill needs a `check` that the solution passes and the code fails")
    needs = reader.text_list(data, "needs", path)
    for need in needs:
        if need not in SANDBOX_NEEDS:
            reader.error(reader.key_mark(data, "needs"), f"{path}.needs",
                         f"unknown need {need!r} (the sandbox can grant: {', '.join(SANDBOX_NEEDS)})")

    if len(reader.errors) > before:
        return None
    return Drill(
        id=drill_id,
        title=reader.text(data, "title", path, default="") or drill_id.replace("-", " "),
        prompt=reader.text(data, "prompt", path),
        code=code or starter,
        asks=tuple(asks),
        explanation=reader.text(data, "explanation", path),
        hints=hints,
        wrong_answers=tuple(wrong),
        setup=setup,
        check=check,
        solution=solution,
        timeout=timeout,
        timeout_reason=timeout_reason,
        tags=reader.text_list(data, "tags", path),
        gpu_note=reader.text(data, "gpu_note", path, default=""),
        starter=starter,
        needs=needs,
        probe=probe,
        line=mark[0],
    )


def _parse_ask(reader: _Reader, item: Any, path: str, mark: Mark) -> Ask | None:
    data = reader.mapping(item, path, mark, _ASK_KEYS, _ASK_OPTIONAL)
    if data is None:
        return None
    before = len(reader.errors)
    kind = reader.text(data, "kind", path)
    if kind and kind not in KINDS:
        reader.error(reader.key_mark(data, "kind"), f"{path}.kind",
                     f"unknown kind {kind!r} (known: {', '.join(sorted(KINDS))})")
    expr = reader.code(data, "expr", path, mode="eval").strip() or None
    if expr is None and kind != "error":
        reader.error(data.mark, f"{path}.expr", "required unless kind is `error` (the code's own exception)")
    options = reader.text_list(data, "options", path)
    if kind == "choice" and len(options) < 2:
        reader.error(reader.key_mark(data, "options") if "options" in data else data.mark, f"{path}.options",
                     "a choice needs at least two options")
    if options and kind != "choice":
        reader.error(reader.key_mark(data, "options"), f"{path}.options", "options only go with kind `choice`")
    tolerance = None
    if "tolerance" in data:
        raw = data["tolerance"]
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw < 0:
            reader.error(reader.key_mark(data, "tolerance"), f"{path}.tolerance", "expected a non-negative number")
        else:
            tolerance = float(raw)
    key = reader.text(data, "id", path, default="") or expr or ERROR_ASK_KEY
    question = reader.text(data, "question", path, default="") or _default_question(kind, expr)
    if len(reader.errors) > before:
        return None
    return Ask(key=key, expr=expr, kind=kind, question=question, options=options, tolerance=tolerance)


def _default_question(kind: str, expr: str | None) -> str:
    if kind == "error":
        return f"What does `{expr}` raise?" if expr else "Which exception does the code raise (or `no error`)?"
    return f"`{expr}` = ?"


def _parse_wrong(reader: _Reader, item: Any, path: str, mark: Mark, asks: list[Ask]) -> WrongAnswer | None:
    data = reader.mapping(item, path, mark, _WRONG_KEYS, _WRONG_OPTIONAL)
    if data is None:
        return None
    ref = reader.text(data, "ask", path, default="") or reader.text(data, "expr", path, default="")
    ref = ref.strip()
    if not ref:
        if len(asks) != 1:
            reader.error(data.mark, path, "say which prediction this answers (`expr:` or `ask:`) "
                         "when a drill has several")
            return None
        ref = asks[0].key
    if asks and not any(a.key == ref for a in asks):
        reader.error(data.mark, path, f"no ask with key {ref!r} (asks: {', '.join(a.key for a in asks)})")
        return None
    return WrongAnswer(ask=ref, answer=reader.text(data, "answer", path),
                       misconception=reader.text(data, "misconception", path))


def _parse_self_check(reader: _Reader, item: Any, path: str, mark: Mark) -> SelfCheck | None:
    data = reader.mapping(item, path, mark, _SELF_CHECK_KEYS, _SELF_CHECK_OPTIONAL)
    if data is None:
        return None
    before = len(reader.errors)
    options = reader.text_list(data, "options", path)
    correct = None
    if options:
        raw = data.get("correct")
        if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw < len(options):
            reader.error(reader.key_mark(data, "correct") if "correct" in data else data.mark, f"{path}.correct",
                         f"multiple choice needs `correct`: the 0-based index of the right option (0..{len(options) - 1})")
        else:
            correct = raw
    elif "correct" in data:
        reader.error(reader.key_mark(data, "correct"), f"{path}.correct", "`correct` only goes with `options`")
    check = SelfCheck(
        id=reader.identifier(data, "id", path),
        question=reader.text(data, "question", path),
        answer=reader.text(data, "answer", path),
        options=options,
        correct=correct,
    )
    return None if len(reader.errors) > before else check
