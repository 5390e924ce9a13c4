"""A tiny, safe evaluator for what learners type: numbers, arithmetic, lists.

``ast.literal_eval`` refuses ``nan``, ``3*4`` and ``1/3``, all of which learners
type; ``eval`` is out of the question in the UI process. This walks the AST and
allows only literals, containers, ``nan``/``inf``/``True``/``False``/``None`` and
bounded arithmetic.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Any

MAX_SOURCE = 20_000
MAX_EXPONENT = 64  # 2**64 is fine; 10**10**10 must not hang the UI

_NAMES = {
    "nan": math.nan,
    "inf": math.inf,
    "infinity": math.inf,
    "true": True,
    "false": False,
    "none": None,
}

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


class LiteralError(ValueError):
    pass


def evaluate(text: str) -> Any:
    """Evaluate ``text`` as a safe literal expression or raise :class:`LiteralError`."""
    if len(text) > MAX_SOURCE:
        raise LiteralError("the answer is too long")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise LiteralError("not a value I can read") from None
    try:
        return _eval(tree.body, 0)
    except RecursionError:
        raise LiteralError("nested too deeply") from None


def _eval(node: ast.AST, depth: int) -> Any:
    if depth > 40:
        raise LiteralError("nested too deeply")
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (int, float, complex, str, bool)) or node.value is None:
            return node.value
        raise LiteralError("unsupported constant")
    if isinstance(node, ast.Name):
        key = node.id.lower()
        if key in _NAMES:
            return _NAMES[key]
        raise LiteralError(f"unknown name {node.id!r}")
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("math", "torch"):
        key = node.attr.lower()
        if key in ("nan", "inf"):
            return _NAMES[key]
        raise LiteralError(f"unknown name {node.value.id}.{node.attr}")
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_eval(e, depth + 1) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Set):
        return {_eval(e, depth + 1) for e in node.elts}
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise LiteralError("unsupported dict")
        return {_eval(k, depth + 1): _eval(v, depth + 1) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval(node.operand, depth + 1)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise LiteralError("sign on a non-number")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left, depth + 1), _eval(node.right, depth + 1)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
            raise LiteralError("arithmetic on a non-number")
        if isinstance(node.op, ast.Pow) and (abs(right) > MAX_EXPONENT or abs(left) > 2**64):
            raise LiteralError("exponent too large")
        if isinstance(node.op, ast.Mult) and abs(left) * abs(right) > 1e300:
            raise LiteralError("number too large")
        try:
            return _BINARY[type(node.op)](left, right)
        except (ZeroDivisionError, OverflowError, ValueError):
            raise LiteralError("arithmetic error") from None
    raise LiteralError("not a plain value")
