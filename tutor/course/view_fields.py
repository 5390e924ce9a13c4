"""Reading the views a drill opts in to (format 2): ``view:``/``of:`` on an ask, ``views:`` on a drill.

A view is shown after the reveal only: it draws what PyTorch recorded (a storage, an
autograd graph, a registered model and its optimizer), which would answer most
questions if it were shown first. See lessons/README.md ("Views"); the sandbox side is
``tutor/sandbox/inner/views.py``. ``check`` runs every declared view and fails a drill
whose view names nothing, or the wrong kind of object.
"""

from __future__ import annotations

import ast
import builtins
from typing import Any

from tutor.course.reader import Reader, join
from tutor.course.yaml_source import Mark, MarkedDict
from tutor.course.schema import View as ViewSpec
from tutor.sandbox.wire.views import MAX_VIEWS, NAME, VIEW_KINDS

VIEW_REQUIRED, VIEW_OPTIONAL = {"view", "of"}, {"optimizer"}
ASK_VIEW_KEYS = {"view", "of"}  # on an ask: `of` defaults to the first name in the ask's expr
# names an expression reads that are not the learner's objects: the first name of `torch.equal(a, b)` is `a`
NOT_OBJECTS = frozenset(dir(builtins)) | {"torch", "nn", "F", "np", "numpy", "math", "functools", "itertools"}


def _kind(reader: Reader, data: MarkedDict, path: str) -> str:
    kind = reader.text(data, "view", path)
    if kind and kind not in VIEW_KINDS:
        reader.error(reader.key_mark(data, "view"), join(path, "view"),
                     f"unknown view {kind[:40]!r} (known: {', '.join(VIEW_KINDS)})")
        return ""
    return kind


def _name(reader: Reader, data: MarkedDict, key: str, path: str) -> str:
    name = reader.text(data, key, path, default="").strip()
    if name and not NAME.fullmatch(name):
        reader.error(reader.key_mark(data, key), join(path, key),
                     f"{name[:60]!r} is not a name: give a Python name bound by the code (or name.attribute)")
        return ""
    return name


def read_views(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> tuple[ViewSpec, ...]:
    """A drill's ``views:`` list, each ``{view: storage | graph | module, of: NAME, optimizer: NAME}``."""
    items = reader.sequence(data, key, path)
    where = join(path, key)
    if key in data and not items:
        reader.error(reader.key_mark(data, key), where, "list at least one view, or leave `views:` out")
    out: list[ViewSpec] = []
    for i, item in enumerate(items):
        spec = _view_item(reader, item, f"{where}[{i}]", items.item_marks[i])
        if spec is not None:
            out.append(spec)
    return out_capped(reader, data, key, where, tuple(out), values.get("ask", ()))


def _view_item(reader: Reader, item: Any, where: str, mark: Mark) -> ViewSpec | None:
    data = reader.mapping(item, where, mark, VIEW_REQUIRED, VIEW_OPTIONAL)
    if data is None:
        return None
    before = len(reader.errors)
    kind, of = _kind(reader, data, where), _name(reader, data, "of", where)
    optimizer = _name(reader, data, "optimizer", where)
    if "of" in data and not of and len(reader.errors) == before:
        reader.error(reader.key_mark(data, "of"), join(where, "of"), "must not be empty")
    if optimizer and kind and kind != "module":
        reader.error(reader.key_mark(data, "optimizer"), join(where, "optimizer"),
                     "`optimizer` only goes with `view: module`")
    return ViewSpec(kind, of, optimizer) if len(reader.errors) == before else None


def out_capped(reader: Reader, data: MarkedDict, key: str, where: str, specs: tuple[ViewSpec, ...],
               asks) -> tuple[ViewSpec, ...]:
    total = len(specs) + sum(1 for a in asks if a.view is not None)
    if total > MAX_VIEWS:
        reader.error(reader.key_mark(data, key), where, f"a drill shows at most {MAX_VIEWS} views (asks' included)")
    return specs


def ask_view(reader: Reader, data: MarkedDict, path: str, expr: str | None) -> ViewSpec | None:
    """An ask's ``view:`` (and ``of:``, defaulting to the first of the learner's names in ``expr``)."""
    if "view" not in data:
        if "of" in data:
            reader.error(reader.key_mark(data, "of"), join(path, "of"), "`of` goes with `view:` (which view of it?)")
        return None
    before = len(reader.errors)
    kind = _kind(reader, data, path)
    of = _name(reader, data, "of", path) if "of" in data else first_name(expr)
    if not of and len(reader.errors) == before:
        where = reader.key_mark(data, "of") if "of" in data else reader.key_mark(data, "view")
        reader.error(where, join(path, "of"), "say which name to view: `of: NAME` (the expression names none)")
    return ViewSpec(kind, of) if len(reader.errors) == before else None


def first_name(expr: str | None) -> str:
    """The first name in ``expr`` (in reading order) that is the code's object, not a module or builtin."""
    if not expr:
        return ""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return ""
    names = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in NOT_OBJECTS),
                   key=lambda n: (n.lineno, n.col_offset))
    return names[0].id if names else ""


def version_problems(reader: Reader, data: MarkedDict, path: str, version: int) -> None:
    """Format 1 has no views: an ask's ``view:``/``of:`` says so at its line (``views:`` is in fields.py)."""
    if version >= 2:
        return
    for i, item in enumerate(reader.sequence(data, "ask", path) if isinstance(data.get("ask"), list) else ()):
        if isinstance(item, MarkedDict):
            for key in ASK_VIEW_KEYS & set(item):
                reader.error(item.key_marks.get(key, item.mark), f"{path}.ask[{i}].{key}",
                             f"`{key}` needs format_version: 2 at the top of the file")


__all__ = ["ASK_VIEW_KEYS", "ask_view", "first_name", "read_views", "version_problems"]
