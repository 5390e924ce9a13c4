"""Reading a drill's ``ask:`` list and its ``wrong_answers:`` (``parse.py`` calls them through ``READERS``).

An ask is one prediction: an expression the sandbox evaluates, the kind of answer that
compares with it, its question; a wrong answer names the ask it answers and the
misconception behind it. (A first-divergence drill's wrong answers are read by
``divergence_fields.py``: they name a line or a stage, not an ask.)
"""

from __future__ import annotations

import re
from typing import Any

from tutor.course import divergence_fields, fields, view_fields
from tutor.course.reader import Reader, join
from tutor.course.schema import ERROR_ASK_KEY, Ask, DrillKind, WrongAnswer
from tutor.course.yaml_source import Mark, MarkedDict
from tutor.judge.kinds import KINDS
from tutor.judge.text_match import DEFAULT_MATCH, MATCH_MODES, pattern_problem


def _asks(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> tuple[Ask, ...]:
    asks: list[Ask] = []
    items = reader.sequence(data, key, path)
    for i, item in enumerate(items):
        ask = _parse_ask(reader, item, f"{path}.ask[{i}]", items.item_marks[i])
        if ask is None:
            continue
        if any(a.key == ask.key for a in asks):
            reader.error(items.item_marks[i], f"{path}.ask[{i}]", f"two asks share the key {ask.key!r}; give one an `id`")
        asks.append(ask)
    return tuple(asks)


def _wrong_answers(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> tuple[WrongAnswer, ...]:
    if values.get("kind") == DrillKind.FIRST_DIVERGENCE:  # {answer: <line or stage>, misconception}
        return divergence_fields.divergence_wrong_answers(reader, data, key, path, values)
    items = reader.sequence(data, key, path)
    if key in data and not items:
        reader.error(reader.key_mark(data, key), join(path, key), "list at least one plausible wrong answer")
    asks = list(values.get("ask", ()))
    wrong = (_parse_wrong(reader, item, f"{path}.wrong_answers[{i}]", items.item_marks[i], asks)
             for i, item in enumerate(items))
    return tuple(w for w in wrong if w is not None)


def _parse_ask(reader: Reader, item: Any, path: str, mark: Mark) -> Ask | None:
    data = reader.mapping(item, path, mark, fields.ASK_REQUIRED, fields.ASK_OPTIONAL)
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
    match, pattern = _text_match(reader, data, path, kind, question)
    view = view_fields.ask_view(reader, data, path, expr)
    bases = reader.text_list(data, "bases", path)
    if bases and kind != "error":
        reader.error(reader.key_mark(data, "bases"), f"{path}.bases", "bases only go with kind `error`")
    if any(not b.isidentifier() for b in bases):
        reader.error(reader.key_mark(data, "bases"), f"{path}.bases", "each base is an exception class's name")
    if len(reader.errors) > before:
        return None
    return Ask(key=key, expr=expr, kind=kind, question=question, options=options, tolerance=tolerance,
               match=match, pattern=pattern, view=view, bases=tuple(bases))


def _text_match(reader: Reader, data: MarkedDict, path: str, kind: str, question: str) -> tuple[str, str]:
    """A text ask says how answers compare; the question's wording must agree with it."""
    match = reader.text(data, "match", path, default="") or DEFAULT_MATCH
    pattern = reader.text(data, "pattern", path, default="")
    if "match" in data and kind != "text":
        reader.error(reader.key_mark(data, "match"), f"{path}.match", "`match` only goes with kind `text`")
    elif match not in MATCH_MODES:
        reader.error(reader.key_mark(data, "match"), f"{path}.match",
                     f"unknown match {match!r} (known: {', '.join(MATCH_MODES)})")
    elif match == "regex" and (why := pattern_problem(pattern)):
        reader.error(reader.key_mark(data, "pattern") if "pattern" in data else data.mark, f"{path}.pattern", why)
    elif "pattern" in data and match != "regex":
        reader.error(reader.key_mark(data, "pattern"), f"{path}.pattern", "`pattern` only goes with `match: regex`")
    elif kind == "text" and match == DEFAULT_MATCH and re.search(r"\bexact(ly)?\b", question, re.IGNORECASE):
        reader.error(reader.key_mark(data, "question") if "question" in data else data.mark, f"{path}.match",
                     "the question asks for the text exactly, but answers compare case-insensitively: "
                     "declare `match: exact` (or reword the question)")
    return match, pattern


def _default_question(kind: str, expr: str | None) -> str:
    if kind == "error":
        return f"What does `{expr}` raise?" if expr else "Which exception does the code raise (or `no error`)?"
    return f"`{expr}` = ?"


def _parse_wrong(reader: Reader, item: Any, path: str, mark: Mark, asks: list[Ask]) -> WrongAnswer | None:
    data = reader.mapping(item, path, mark, fields.WRONG_REQUIRED, fields.WRONG_OPTIONAL)
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


READERS = {"asks": _asks, "wrong_answers": _wrong_answers}
