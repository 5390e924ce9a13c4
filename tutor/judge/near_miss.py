"""Answers that are close but not what was asked: say what the learner gave instead.

"you gave a dtype; this asks for the Python type" teaches more than "I can't read
that" or a bare mismatch. Each rule recognises the *form* of the answer (a dtype,
a shape, an exception's message) in an ask of another kind.
"""

from __future__ import annotations

import re
from typing import Any

from tutor.judge.parsers import AnswerError, parse_dims, parse_dtype, parse_tensor

_PYTHON_TYPES = {"float", "int", "bool", "str", "complex", "list", "tuple", "dict"}
_DEVICE = re.compile(r"^(?:cpu|cuda(?::\d+)?|mps|meta)$", re.IGNORECASE)


def _is_dtype(text: str) -> bool:
    key = text.strip().strip("'\"`").lower()
    if key in _PYTHON_TYPES:  # float and int are Python types first
        return False
    try:
        parse_dtype(text)
    except AnswerError:
        return False
    return True


def _is_shape(text: str) -> bool:
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+", text):  # 1,000 is one number
        return False
    if not re.search(r"size|[(\[,x×]", text, re.IGNORECASE):
        return False
    try:
        return len(parse_dims(text)) >= 1
    except (AnswerError, ValueError):
        return False


def _is_values(text: str) -> bool:
    try:
        return isinstance(parse_tensor(text), list)
    except Exception:  # noqa: BLE001 - any unreadable answer is simply not values
        return False


def _asks_for_type(ask: Any) -> bool:
    where = f"{ask.expr or ''} {ask.question}".lower()
    return "type(" in where or "__name__" in where or "python type" in where or "__class__" in where


def near_miss(ask: Any, answer: str) -> str:
    """A note when ``answer`` has the form of another kind than ``ask`` asks for, else ``""``."""
    text = answer.strip()
    kind = ask.kind
    if not text:
        return ""
    if kind == "text" and _is_dtype(text):
        what = "the Python type" if _asks_for_type(ask) else "text"
        return f"you gave a dtype; this asks for {what}"
    if kind == "dtype" and _DEVICE.match(text):
        return "you gave a device; this asks for a dtype"
    if kind == "device" and _is_dtype(text):
        return "you gave a dtype; this asks for a device"
    if kind in ("int", "float") and _is_shape(text):
        return "you gave several numbers (a shape?); this asks for one number"
    if kind in ("shape", "stride") and _is_values(text) and not _is_shape(text):
        return f"you gave tensor values; this asks for the {kind}"
    if kind == "error" and " " in text and not text[:1].isupper():
        return 'you gave a message; this asks for the exception class (e.g. RuntimeError) or "no error"'
    return ""
