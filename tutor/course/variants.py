"""Drill variants (format 3): parameters that vary a drill's setup and code, drawn per attempt.

A drill declares ``variants: {params, where, corners}``; its text fields name a parameter
as ``{{name}}``. Double braces, not ``$name`` or ``{name}``: ``{name}`` is Python's own
(dict and set displays, f-strings, ``str.format``) and ``$`` cannot be written in code at
all, while ``{{rows}}`` is still valid Python syntax where a value goes, so editors and
the syntax check keep working on the raw code (the parser compiles a rendered instance).

The tutor never needs an answer key: the sandbox observes an instance's answers, so any
instance is gradable. ``present_drill_instance(drill, seed)`` is the one entry point the
session, review and retry paths call to get the drill as the learner sees it for an attempt.

``where:`` is read with ``ast`` into a tiny whitelisted grammar (comparisons, and/or/not,
``a if b else c``, + - * / // %, parameter names, literals) and evaluated by walking that tree: never ``eval``. A placeholder
may be such an expression too (``{{rows * cols}}``), for the numbers an explanation or a wrong answer derives.
"""

from __future__ import annotations

import ast
import itertools
import operator
import random
import re
from dataclasses import dataclass, replace
from typing import Any

from tutor.course.reader import Reader, join, type_name
from tutor.course.yaml_source import MarkedDict

VARIANTS_REQUIRED, VARIANTS_OPTIONAL = {"params"}, {"where", "corners"}
# `{{rows}}`, or an expression over the parameters in the `where:` grammar: `{{rows * cols}}`, `{{k * 2}}`
PLACEHOLDER = re.compile(r"\{\{([^{}\n]+?)\}\}")
PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
MAX_VALUES = 50  # per parameter
MAX_INSTANCES = 5000  # the whole space, enumerated once at load time
MAX_WHERE = 200  # characters
Scalar = int | float | str | bool
Instance = tuple[tuple[str, Scalar], ...]  # (name, value) in declared order


class WhereError(ValueError):
    """A ``where:`` outside the whitelisted grammar."""


_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
          ast.Mod: operator.mod, ast.Div: operator.truediv}


def parse_where(text: str, names: set[str]) -> ast.expr:
    """The tree of a constraint, or :class:`WhereError` saying what is not allowed."""
    if len(text) > MAX_WHERE:
        raise WhereError(f"a constraint has at most {MAX_WHERE} characters")
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise WhereError(f"not an expression: {exc.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise WhereError(f"{node.id!r} is not a declared parameter")
        elif isinstance(node, ast.Constant):
            if not isinstance(node.value, (int, float, str, bool)):
                raise WhereError("only numbers, strings and true/false are allowed as literals")
        elif isinstance(node, ast.BinOp) and type(node.op) not in _ARITH:
            raise WhereError("only + - * / // % are allowed")
        elif isinstance(node, ast.Compare) and any(type(op) not in _COMPARE for op in node.ops):
            raise WhereError("only == != < <= > >= in, not in are allowed")
        elif isinstance(node, ast.UnaryOp) and not isinstance(node.op, (ast.Not, ast.USub)):
            raise WhereError("only `not` and unary minus are allowed")
        elif not isinstance(node, (ast.Name, ast.Constant, ast.BinOp, ast.Compare, ast.UnaryOp, ast.BoolOp, ast.Tuple,
                                   ast.List, ast.IfExp, ast.Load, ast.And, ast.Or, ast.Not, ast.USub, *_ARITH, *_COMPARE)):
            raise WhereError(f"{type(node).__name__} is not allowed (comparisons, and/or/not, a if b else c, "
                             "+ - * / // % only)")
    return tree


def evaluate(node: ast.expr, env: dict[str, Scalar]) -> Any:
    """Walk a tree :func:`parse_where` accepted (nothing else reaches here)."""
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(evaluate(e, env) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        value = evaluate(node.operand, env)
        return (not value) if isinstance(node.op, ast.Not) else -value
    if isinstance(node, ast.BoolOp):
        values = (evaluate(v, env) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.BinOp):
        return _ARITH[type(node.op)](evaluate(node.left, env), evaluate(node.right, env))
    if isinstance(node, ast.IfExp):  # only the branch taken is evaluated
        return evaluate(node.body, env) if evaluate(node.test, env) else evaluate(node.orelse, env)
    assert isinstance(node, ast.Compare)
    left = evaluate(node.left, env)
    for op, right_node in zip(node.ops, node.comparators):
        right = evaluate(right_node, env)
        if not _COMPARE[type(op)](left, right):
            return False
        left = right
    return True


@dataclass(frozen=True)
class Variants:
    """A drill's parameters, its constraint, its corners and the instances they allow (declared order)."""

    params: tuple[tuple[str, tuple[Scalar, ...]], ...]
    where: str = ""
    corners: tuple[Instance, ...] = ()
    instances: tuple[Instance, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.params)

    def draw(self, seed: int) -> Instance:
        """The instance an attempt with ``seed`` sees: the same seed always gives the same instance."""
        return self.instances[random.Random(seed).randrange(len(self.instances))]

    def sample(self, seed: int, count: int) -> tuple[Instance, ...]:
        """Every corner, then up to ``count`` more distinct instances drawn from ``seed`` (what `check` runs)."""
        rest = [i for i in self.instances if i not in self.corners]
        return self.corners + tuple(random.Random(seed).sample(rest, min(count, len(rest))))


def _values(reader: Reader, raw: Any, where: str, mark) -> tuple[Scalar, ...]:
    if isinstance(raw, dict) and set(raw) <= {"range", "step"} and "range" in raw:
        bounds, step = raw["range"], raw.get("step", 1)
        if (not isinstance(bounds, list) or len(bounds) != 2 or
                any(isinstance(b, bool) or not isinstance(b, int) for b in [*bounds, step]) or step < 1
                or bounds[0] > bounds[1]):
            reader.error(mark, where, "a range is {range: [low, high]} of whole numbers, low <= high "
                         "(both included), with an optional whole `step` >= 1")
            return ()
        values = tuple(range(bounds[0], bounds[1] + 1, step))
    elif isinstance(raw, list) and raw:
        if any(isinstance(v, (dict, list)) or v is None for v in raw):
            reader.error(mark, where, "values are numbers, words or true/false")
            return ()
        values = tuple(raw)
    else:
        reader.error(mark, where, f"expected a list of values or {{range: [low, high]}}, got {type_name(raw)}")
        return ()
    if len(values) > MAX_VALUES or len(set(values)) != len(values):
        reader.error(mark, where, f"give between 1 and {MAX_VALUES} distinct values")
        return ()
    return values


def read_variants(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> Variants | None:
    """A drill's ``variants:`` block, every problem at its file:line."""
    where = join(path, key)
    block = reader.mapping(data[key], where, reader.key_mark(data, key), VARIANTS_REQUIRED, VARIANTS_OPTIONAL)
    if block is None:
        return None
    before = len(reader.errors)
    params: list[tuple[str, tuple[Scalar, ...]]] = []
    raw_params = block.get("params")
    if not isinstance(raw_params, MarkedDict) or not raw_params:
        reader.error(reader.key_mark(block, "params"), join(where, "params"), "name at least one parameter and its values")
        return None
    for name, raw in raw_params.items():
        name_where = join(where, f"params.{name}")
        if not isinstance(name, str) or not PARAM_NAME.fullmatch(name):
            reader.error(raw_params.key_marks[name], name_where, "a parameter's name is a Python-style name")
            continue
        params.append((name, _values(reader, raw, name_where, raw_params.key_marks[name])))
    names = {n for n, _ in params}
    tree = None
    if "where" in block:
        try:
            tree = parse_where(str(block["where"]), names)
        except WhereError as exc:
            reader.error(reader.key_mark(block, "where"), join(where, "where"), str(exc))
    if len(reader.errors) > before:
        return None
    space = 1
    for _, vals in params:
        space *= len(vals)
    if space > MAX_INSTANCES:
        reader.error(reader.key_mark(data, key), where, f"{space} combinations: keep it at most {MAX_INSTANCES}")
        return None
    instances = tuple(inst for inst in (tuple(zip(names_in_order(params), combo))
                                        for combo in itertools.product(*(v for _, v in params)))
                      if tree is None or evaluate(tree, dict(inst)))
    if len(instances) < 2:
        reader.error(reader.key_mark(block, "where") if "where" in block else reader.key_mark(data, key), where,
                     f"only {len(instances)} instance(s) satisfy the constraint: a variant needs at least two")
        return None
    corners = _corners(reader, block, where, params, instances)
    if len(reader.errors) > before:
        return None
    return Variants(tuple(params), str(block.get("where", "")), corners, instances)


def names_in_order(params) -> tuple[str, ...]:
    return tuple(n for n, _ in params)


def _corners(reader: Reader, block: MarkedDict, where: str, params, instances) -> tuple[Instance, ...]:
    items = reader.sequence(block, "corners", where)
    out: list[Instance] = []
    for i, item in enumerate(items):
        corner_where = join(where, f"corners[{i}]")
        if not isinstance(item, dict) or set(item) != set(names_in_order(params)):
            reader.error(items.item_marks[i], corner_where,
                         f"a corner gives every parameter a value ({', '.join(names_in_order(params))})")
            continue
        inst = tuple((name, item[name]) for name in names_in_order(params))
        if inst not in instances:
            reader.error(items.item_marks[i], corner_where, "not an instance: a value outside its parameter's values, "
                         "or the constraint excludes it")
            continue
        out.append(inst)
    return tuple(out)


# ---------------------------------------------------------------- placeholders and rendering

def instance_text(instance: Instance) -> str:
    """How an instance is named in a report: ``rows=2, cols=5``."""
    return ", ".join(f"{name}={_shown(value)}" for name, value in instance)


def placeholders(text: str) -> set[str]:
    """The parameter names the placeholders of ``text`` read (``{{rows * cols}}`` reads rows and cols)."""
    names: set[str] = set()
    for match in PLACEHOLDER.finditer(text or ""):
        body = match[1].strip()
        try:
            tree = ast.parse(body, mode="eval")
        except SyntaxError:
            continue  # placeholder_problems says so
        names |= {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return names


def expression_problems(text: str, names: set[str]) -> list[str]:
    """Why each placeholder of ``text`` that is more than a name cannot be rendered (the `where:` grammar)."""
    problems = []
    for match in PLACEHOLDER.finditer(text or ""):
        body = match[1].strip()
        if PARAM_NAME.fullmatch(body):
            continue  # a name: checked against the declared parameters by placeholder_problems
        try:
            parse_where(body, names | placeholders(match[0]))
        except WhereError as exc:
            problems.append(f"`{match[0]}` is not an expression over the parameters: {exc}")
    return problems


def render(text: str, instance: Instance) -> str:
    """``text`` with each ``{{name}}`` or ``{{expression}}`` replaced by its value for the instance
    (a placeholder that names no parameter, or cannot be evaluated, is left as it is)."""
    env = dict(instance)

    def value(match: re.Match) -> str:
        body = match[1].strip()
        if body in env:
            return _shown(env[body])
        try:
            return _shown(evaluate(parse_where(body, set(env)), env))
        except (WhereError, ArithmeticError, TypeError):
            return match[0]

    return PLACEHOLDER.sub(value, text or "")


def _shown(value: Scalar) -> str:
    return value if isinstance(value, str) else repr(value)


def drill_texts(values: dict) -> dict[str, str]:
    """Every text of a parsed drill that may name a parameter, by field (what `validate` checks)."""
    out = {key: values.get(key) or "" for key in ("prompt", "setup", "code", "check", "solution", "probe", "explanation",
                                                  "gpu_note")}
    for i, hint in enumerate(values.get("hints", ())):
        out[f"hints[{i}]"] = hint
    for i, ask in enumerate(values.get("ask", ())):
        out[f"ask[{i}]"] = f"{ask.expr or ''}\n{ask.question}"
    for i, wrong in enumerate(values.get("wrong_answers", ())):
        out[f"wrong_answers[{i}]"] = f"{wrong.answer}\n{wrong.misconception}"
    out["answer"] = values.get("_answer_template", "")  # a first-divergence drill whose bug moves per instance
    for i, wrong in enumerate(values.get("wrong_submissions", ())):  # a repair's wrong fixes move with the bug
        out[f"wrong_submissions[{i}]"] = "\n".join([wrong.code, wrong.says, wrong.misconception,
                                                   *(code for _, code in wrong.files)])
    return out


def placeholder_problems(values: dict, spec: Variants | None) -> list[tuple[str, str]]:
    """(field, message) for each placeholder not declared, and each parameter used nowhere."""
    used: set[str] = set()
    problems = []
    declared = set(spec.names) if spec else set()
    for field, text in drill_texts(values).items():
        names = placeholders(text)
        used |= names
        problems.extend((field, message) for message in expression_problems(text, declared))
        for name in sorted(names - declared):
            why = "declare it under `variants: params:`" if spec else "this drill declares no `variants:`"
            problems.append((field, f"`{{{{{name}}}}}` names no parameter: {why}"))
    for name in (spec.names if spec else ()):
        if name not in used:
            problems.append(("variants", f"parameter {name!r} is used nowhere: name it as {{{{{name}}}}} in the code "
                                         "(a parameter that changes nothing makes no variant)"))
    return problems


def present_drill_instance(drill, seed: int | None):
    """The drill an attempt with ``seed`` shows and runs: every text rendered for the drawn instance.

    Ask keys stay the base drill's (progress rows, wrong answers and misconceptions refer to
    them), so matching works on an instance as on the base drill. A drill without variants
    comes back as it is; ``seed`` None gives the base instance (the first corner, else the
    first instance: what the syntax check saw, and what the loader hands every other path).
    """
    spec = drill.variants
    if spec is None:
        return drill
    return present_instance(drill, spec.draw(seed) if seed is not None else (spec.corners or spec.instances)[0])


def present_instance(drill, instance: Instance):
    """The drill rendered for one given instance (``check`` runs corners and a sample this way)."""
    drill = drill.template or drill
    r = lambda text: render(text, instance)  # noqa: E731
    asks = tuple(replace(a, expr=r(a.expr) if a.expr else a.expr, question=r(a.question),
                         options=tuple(map(r, a.options))) for a in drill.asks)
    wrong = tuple(replace(w, answer=r(w.answer), misconception=r(w.misconception)) for w in drill.wrong_answers)
    fixes = tuple(replace(w, code=r(w.code), says=r(w.says), misconception=r(w.misconception),
                          files=tuple((name, r(code)) for name, code in w.files)) for w in drill.wrong_submissions)
    divergence = drill.divergence
    if divergence is not None:
        from tutor.course.divergence_fields import for_instance

        divergence = for_instance(divergence, r, len(r(drill.code).splitlines()))
    return replace(drill, prompt=r(drill.prompt), code=r(drill.code), setup=r(drill.setup), check=r(drill.check),
                   divergence=divergence,
                   solution=r(drill.solution), probe=r(drill.probe), explanation=r(drill.explanation),
                   gpu_note=r(drill.gpu_note), wrong_submissions=fixes,
                   hints=tuple(map(r, drill.hints)), asks=asks, wrong_answers=wrong, instance=instance,
                   template=drill)
