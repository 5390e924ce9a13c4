"""The first-divergence drill's keys: contracts per name, stages, the answer, wrong answers and trace hints.

A ``kind: first-divergence`` drill (format 2) runs its code traced (``sandbox/inner/trace.py``)
and asks the learner for the first line (or named stage) where a contract fails; the judge
takes that line from the trace of the real run (``judge/contracts.py``), never from
``answer:``, which ``pytorch-tutor check`` proves. See lessons/README.md, "First-divergence
drills". This module reads and checks the keys; ``parse.py`` calls it through ``READERS``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from typing import Any

from tutor.course.reader import Reader, join, type_name, unquoted_colon_note
from tutor.course.yaml_source import MarkedDict, MarkedList

ASK_KEY = "first-divergence"  # the key of the one prediction a first-divergence drill asks for
CONTRACT_KEYS = {"shape", "range", "finite", "requires_grad", "dtype", "holds"}
STAGE_KEYS = {"name", "lines"}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
DTYPES = {"float16", "bfloat16", "float32", "float64", "complex64", "complex128", "uint8", "int8", "int16",
          "int32", "int64", "bool", "half", "float", "double", "long", "int", "short"}
DTYPE_ALIASES = {"half": "float16", "float": "float32", "double": "float64", "long": "int64", "int": "int32",
                 "short": "int16"}


@dataclass(frozen=True)
class Contract:
    """What a name should satisfy on every row where it is bound or changed."""

    name: str
    shape: tuple[int | str, ...] | None = None  # ints, or symbols that bind on first sight
    range: tuple[float, float] | None = None
    finite: bool | None = None
    requires_grad: bool | None = None
    dtype: str | None = None  # canonical, with torch. ("torch.int64")
    holds: str | None = None  # a Python expression, evaluated in the sandbox after each row

    def describe(self) -> str:
        """The contract as an author wrote it: ``range [0, 1]``."""
        parts = []
        if self.shape is not None:
            parts.append("shape [" + ", ".join(map(str, self.shape)) + "]")
        if self.range is not None:
            parts.append(f"range [{self.range[0]:g}, {self.range[1]:g}]")
        if self.finite is not None:
            parts.append("finite" if self.finite else "not finite")
        if self.requires_grad is not None:
            parts.append(f"requires_grad {str(self.requires_grad).lower()}")
        if self.dtype is not None:
            parts.append(f"dtype {self.dtype.removeprefix('torch.')}")
        if self.holds is not None:
            parts.append(f"holds `{self.holds}`")
        return ", ".join(parts)


@dataclass(frozen=True)
class CodeStage:
    """A named range of the code's lines; the learner may answer with its name."""

    name: str
    first: int
    last: int

    def __contains__(self, line: int) -> bool:
        return self.first <= line <= self.last


@dataclass(frozen=True)
class FirstDivergence:
    """A first-divergence drill's own part of the lesson."""

    contracts: tuple[Contract, ...]
    answer_line: int | None = None  # the declared answer: a line ...
    answer_stage: str = ""  # ... or a stage's name
    answer_template: str = ""  # a drill with variants: the answer as a placeholder, rendered per instance
    stages: tuple[CodeStage, ...] = ()
    trace_function: str = ""
    trace_until: tuple[int | None, ...] = ()  # per hint: show the trace up to this line (None: a text hint)

    @property
    def declared(self) -> str:
        return f"line {self.answer_line}" if self.answer_line is not None else f"stage {self.answer_stage}"

    def stage(self, name: str) -> CodeStage | None:
        return next((s for s in self.stages if s.name.lower() == name.lower()), None)

    def stage_of(self, line: int) -> CodeStage | None:
        return next((s for s in self.stages if line in s), None)

    @property
    def holds(self) -> tuple[tuple[str, str], ...]:
        return tuple((c.name, c.holds) for c in self.contracts if c.holds is not None)


def question(stages: tuple[CodeStage, ...]) -> str:
    """The one prediction's wording: a line number, or a stage's name."""
    if not stages:
        return "At which line of the code does a contract first fail?"
    named = "; ".join(f"{s.name} (lines {s.first}–{s.last})" for s in stages)
    return f"At which line of the code, or in which stage ({named}), does a contract first fail?"


def trace_hint_text(line: int) -> str:
    return f"Read the trace up to line {line}: does every contract still hold there?"


def code_lines(values: dict) -> int:
    return len(values.get("code", "").splitlines())


# ---------------------------------------------------------------- readers (named in fields.py)


def _contracts(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> tuple[Contract, ...]:
    where = join(path, key)
    raw = data[key]
    if not isinstance(raw, MarkedDict) or not raw:
        reader.error(reader.key_mark(data, key), where, "expected a mapping of name -> contract, at least one")
        return ()
    out = []
    for name in raw:
        at = join(where, str(name))
        if not isinstance(name, str) or not NAME.fullmatch(name):
            reader.error(raw.key_marks.get(name, raw.mark), at, f"{str(name)[:40]!r} is not a Python name")
            continue
        item = reader.mapping(raw[name], at, raw.key_marks[name], set(), CONTRACT_KEYS)
        if item is None:
            continue
        if not item:
            reader.error(raw.key_marks[name], at, f"say what {name} should satisfy ({', '.join(sorted(CONTRACT_KEYS))})")
            continue
        out.append(Contract(name=name, shape=_shape(reader, item, at), range=_range(reader, item, at),
                            finite=_flag(reader, item, "finite", at), requires_grad=_flag(reader, item, "requires_grad", at),
                            dtype=_dtype(reader, item, at), holds=_holds(reader, item, at)))
    return tuple(out)


def _shape(reader: Reader, item: MarkedDict, at: str) -> tuple[int | str, ...] | None:
    if "shape" not in item:
        return None
    raw = item["shape"]
    dims = []
    for d in raw if isinstance(raw, list) else [None]:
        if isinstance(d, int) and not isinstance(d, bool) and d >= 0:
            dims.append(d)
        elif isinstance(d, str) and SYMBOL.fullmatch(d):
            dims.append(d)
        else:
            reader.error(reader.key_mark(item, "shape"), join(at, "shape"),
                         "expected a list of sizes: whole numbers or symbols such as B (e.g. [B, 3, H, W])")
            return None
    return tuple(dims)


def _range(reader: Reader, item: MarkedDict, at: str) -> tuple[float, float] | None:
    if "range" not in item:
        return None
    raw = item["range"]
    ok = (isinstance(raw, list) and len(raw) == 2
          and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in raw) and raw[0] <= raw[1])
    if not ok:
        reader.error(reader.key_mark(item, "range"), join(at, "range"), "expected [low, high] with low <= high")
        return None
    return float(raw[0]), float(raw[1])


def _flag(reader: Reader, item: MarkedDict, key: str, at: str) -> bool | None:
    if key not in item:
        return None
    if not isinstance(item[key], bool):
        reader.error(reader.key_mark(item, key), join(at, key), "expected true or false")
        return None
    return item[key]


def _dtype(reader: Reader, item: MarkedDict, at: str) -> str | None:
    if "dtype" not in item:
        return None
    raw = str(item["dtype"]).removeprefix("torch.")
    if raw not in DTYPES:
        reader.error(reader.key_mark(item, "dtype"), join(at, "dtype"),
                     f"unknown dtype {raw[:30]!r} (e.g. float32, int64, bool)")
        return None
    return "torch." + DTYPE_ALIASES.get(raw, raw)


def _holds(reader: Reader, item: MarkedDict, at: str) -> str | None:
    if "holds" not in item:
        return None
    text = reader.code(item, "holds", at, mode="eval").strip()
    if not text:
        reader.error(reader.key_mark(item, "holds"), join(at, "holds"), "expected a Python expression")
        return None
    return text


def _stages(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> tuple[CodeStage, ...]:
    items = reader.sequence(data, key, path)
    out: list[CodeStage] = []
    lines = code_lines(values)
    for i, item in enumerate(items):
        where = f"{join(path, key)}[{i}]"
        stage = reader.mapping(item, where, items.item_marks[i], STAGE_KEYS, set())
        if stage is None:
            continue
        name = reader.identifier(stage, "name", where)
        span = stage.get("lines")
        if not (isinstance(span, list) and len(span) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                  for v in span) and 1 <= span[0] <= span[1] <= lines):
            reader.error(reader.key_mark(stage, "lines"), join(where, "lines"),
                         f"expected [first, last]: lines of the code, 1 to {lines}")
            continue
        if re.fullmatch(r"(?:line\s*|l)?\d+", name, re.IGNORECASE) or len(name) == 1:
            reader.error(reader.key_mark(stage, "name"), join(where, "name"),
                         "a stage's name must not read as a line number or an option letter")
            continue
        clash = next((s for s in out if s.name.lower() == name.lower() or s.first <= span[1] and span[0] <= s.last), None)
        if clash is not None:
            reader.error(items.item_marks[i], where, f"overlaps or repeats stage {clash.name!r}")
            continue
        out.append(CodeStage(name, span[0], span[1]))
    return tuple(out)


def read_answer_value(raw: Any, stages: tuple[CodeStage, ...], lines: int) -> tuple[int | None, str, str]:
    """(line, stage, problem) of a declared answer: a line of the code or a stage's name."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return (raw, "", "") if 1 <= raw <= lines else (None, "", f"line {raw} is not in the code (1 to {lines})")
    text = str(raw).strip()
    match = re.fullmatch(r"(?:line\s*|l)?(\d+)", text, re.IGNORECASE)
    if match:
        return read_answer_value(int(match.group(1)), stages, lines)
    stage = next((s for s in stages if s.name.lower() == text.lower()), None)
    if stage is not None:
        return None, stage.name, ""
    named = f" or a stage ({', '.join(s.name for s in stages)})" if stages else ""
    return None, "", f"expected a line of the code (1 to {lines}){named}, got {text[:40]!r}"


def templated(raw: Any) -> bool:
    """An answer written as a placeholder (``"{{bug_line}}"``): a drill with variants moves its bug per
    instance; it is read, and proved by ``check``, on each rendered instance."""
    return isinstance(raw, str) and "{{" in raw


def _answer(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> tuple[int | None, str]:
    if templated(data[key]):
        values["_answer_template"] = data[key]
        return None, ""
    line, stage, problem = read_answer_value(data[key], values.get("stages", ()), code_lines(values))
    if problem:
        reader.error(reader.key_mark(data, key), join(path, key), problem)
    return line, stage


def _trace_function(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> str:
    name = reader.text(data, key, path)
    try:
        tree = ast.parse(values.get("code", ""))
    except SyntaxError:
        return name  # reported at `code`
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if name and name not in defined:
        reader.error(reader.key_mark(data, key), join(path, key),
                     f"the code defines no function {name[:40]!r}" + (f" (it defines: {', '.join(sorted(defined))})"
                                                                       if defined else ""))
    return name


def divergence_hints(reader: Reader, data: MarkedDict, key: str, path: str, values: dict):
    """Hints of a first-divergence drill: texts, or ``{trace_until: N}`` (bisection; never the failing row)."""
    items = data[key]
    where = join(path, key)
    if not isinstance(items, MarkedList) or not items:
        reader.error(reader.key_mark(data, key), where, "give at least one hint")
        return (), ()
    texts, until = [], []
    lines = code_lines(values)
    answer_line, answer_stage = values.get("answer", (None, ""))
    stage = next((s for s in values.get("stages", ()) if s.name == answer_stage), None)
    limit = answer_line if answer_line is not None else (stage.first if stage else lines + 1)
    for i, item in enumerate(items):
        at = f"{where}[{i}]"
        if isinstance(item, str) and item.strip():
            texts.append(item)
            until.append(None)
            continue
        if isinstance(item, MarkedDict) and "trace_until" not in item:
            note = unquoted_colon_note(item)
            reader.error(items.item_marks[i], at, "expected a hint's text or {trace_until: N}" + note)
            continue
        hint = reader.mapping(item, at, items.item_marks[i], {"trace_until"}, set())
        if hint is None:
            continue
        n = hint["trace_until"]
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= lines:
            reader.error(hint.mark, join(at, "trace_until"), f"expected a line of the code, 1 to {lines}")
            continue
        if n >= limit:
            reader.error(hint.mark, join(at, "trace_until"),
                         f"line {n} shows the failing row (the answer is {answer_line or answer_stage}): "
                         "reveal the trace only up to a line before it")
            continue
        texts.append(trace_hint_text(n))
        until.append(n)
    return tuple(texts), tuple(until)


def divergence_wrong_answers(reader: Reader, data: MarkedDict, key: str, path: str, values: dict):
    """Wrong answers of a first-divergence drill: ``{answer: 9, misconception: ...}``, each not the answer."""
    from tutor.course.schema import WrongAnswer

    items = reader.sequence(data, key, path)
    if key in data and not items:
        reader.error(reader.key_mark(data, key), join(path, key), "list at least one plausible wrong answer")
    stages, lines = values.get("stages", ()), code_lines(values)
    declared = values.get("answer", (None, ""))
    out = []
    for i, item in enumerate(items):
        where = f"{join(path, key)}[{i}]"
        wrong = reader.mapping(item, where, items.item_marks[i], {"answer", "misconception"}, set())
        if wrong is None:
            continue
        if templated(wrong["answer"]) or "_answer_template" in values:  # proved per instance by `check`
            out.append(WrongAnswer(ask=ASK_KEY, answer=str(wrong["answer"]).strip(),
                                   misconception=reader.text(wrong, "misconception", where)))
            continue
        line, stage, problem = read_answer_value(wrong["answer"], stages, lines)
        if problem:
            reader.error(reader.key_mark(wrong, "answer"), join(where, "answer"), problem)
            continue
        if (line, stage) == tuple(declared):
            reader.error(reader.key_mark(wrong, "answer"), join(where, "answer"), "this is the drill's `answer`")
            continue
        text = str(line) if line is not None else stage
        out.append(WrongAnswer(ask=ASK_KEY, answer=text, misconception=reader.text(wrong, "misconception", where)))
    return tuple(out)


def divergence_rules(reader: Reader, data: MarkedDict, path: str, values: dict) -> None:
    """What one key alone cannot say: a contract's holds-name, stages inside the code."""
    if not values.get("contracts"):
        return
    try:
        tree = ast.parse(values.get("code", ""))
    except SyntaxError:
        return
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        a.arg for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for a in n.args.args}
    for contract in values["contracts"]:
        if contract.name not in bound:
            reader.error(reader.key_mark(data, "contracts"), join(join(path, "contracts"), contract.name),
                         f"the code never names {contract.name!r}: a contract is about a name the code binds")


def build(values: dict) -> FirstDivergence | None:
    if "contracts" not in values:
        return None
    line, stage = values.get("answer", (None, ""))
    return FirstDivergence(contracts=values["contracts"], answer_line=line, answer_stage=stage,
                           stages=values.get("stages", ()), trace_function=values.get("trace_function", ""),
                           trace_until=values.get("_trace_until", ()),
                           answer_template=values.get("_answer_template", ""))


def for_instance(spec: FirstDivergence, render, lines: int) -> FirstDivergence:
    """The drill's first-divergence part on one instance: a templated answer read as that instance's line
    (or stage); one that reads as neither stays unset, and `check` names the instance."""
    if not spec.answer_template:
        return spec
    line, stage, problem = read_answer_value(render(spec.answer_template), spec.stages, lines)
    return replace(spec, answer_line=None if problem else line, answer_stage="" if problem else stage)


READERS = {"contracts": _contracts, "stages": _stages, "answer": _answer, "trace_function": _trace_function}
__all__ = ["ASK_KEY", "CodeStage", "Contract", "FirstDivergence", "build", "question", "type_name"]
