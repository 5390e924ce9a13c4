"""Which names a piece of source binds at module level, read on the host from its text.

The judge's process of a repair or a lab binds the learner's exported data only under names
the drill declares (``Sandbox.run``): the names its code, its probe and its tests' probes
bind, as read here, never as the learner's process reports them. ``symtable`` is the
compiler's own reading of scopes, so every way of binding counts: assignments (augmented,
annotated, unpacked, walrus, also inside a module-level comprehension), ``for``/``with``/
``except``/``match`` targets, imports, ``def``/``class``, ``del``, and a function's
``global`` names that it assigns. Nothing is executed; source that does not compile binds
nothing. Standard library only (host side, no torch).
"""

from __future__ import annotations

import ast
import builtins
import symtable

from tutor.sandbox.wire import RunRequest


def bound_names(source: str, imports: bool = True) -> frozenset[str]:
    """The module-level names ``source`` binds (empty when it does not compile); ``imports=False``
    leaves out the names only an import binds (``torch``, ``F``)."""
    if not source.strip():
        return frozenset()
    try:
        table = symtable.symtable(source, "<source>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    names = {s.get_name() for s in table.get_symbols()
             if s.is_assigned() or (imports and s.is_imported())}
    pending = list(table.get_children())
    while pending:  # a function's (or class body's) `global x` with `x = ...` binds x in the module
        scope = pending.pop()
        names.update(s.get_name() for s in scope.get_symbols()
                     if s.is_declared_global() and (s.is_assigned() or s.is_imported()))
        pending.extend(scope.get_children())
    return frozenset(names)


def learners_own(source: str) -> frozenset[str]:
    """What only the learner's process can use: the module-level functions and classes ``source``
    defines, and the names it binds to an object of one of those classes (``net = Net()``)."""
    tree = _parsed(source)
    if tree is None:
        return frozenset()
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    own = {node.name for node in tree.body if isinstance(node, defs)}
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Name) and node.value.func.id in classes:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            own.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(own)


def calls_learner_code(request: RunRequest) -> bool:
    """Does a judged check use what only the learner's process has (``learners_own``)?

    Then the learner's half stays to serve the judge's calls (``inner/remote.py``). Read from the
    text, as a cost decision only (both halves then fork for the run, ~0.25 s more; a judge whose
    check uses an object it was not given one for says so by name): ``check: assert band(x) == ...``
    where the code defines ``band``."""
    used = frozenset().union(*(_names_read(c) for c in (request.check, *(t.check for t in request.tests))))
    return bool(used & learners_own(request.code))


def _names_read(source: str) -> frozenset[str]:
    """The names ``source`` reads (not those inside its strings, such as a message's ``band()``)."""
    tree = _parsed(source)
    if tree is None:
        return frozenset()
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))


def _parsed(source: str) -> ast.Module | None:
    """``source``'s syntax tree (None when it is empty or does not compile: it then names nothing)."""
    try:
        return ast.parse(source) if source.strip() else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def bound_by_any(*sources: str) -> frozenset[str]:
    """The names any of ``sources`` binds."""
    return frozenset().union(*(bound_names(s) for s in sources))


def judged_names(request: RunRequest) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the judge's half may take from the learner's export: (binds, rebinds), read here from the text.

    ``binds``: the names the drill declares (its own code, solution and starter: ``declares``),
    its probe and its tests' probes bind, and the learner's code binds too, except Python's
    built-in names (a check's ``len`` or ``AssertionError`` stays Python's). ``rebinds``: the
    setup constants whose value the export may carry, those the drill's own sources bind
    (not the learner's code). Never what the learner's process says it bound.
    """
    author = bound_by_any(request.probe, *(t.probe for t in request.tests)) | set(request.declares)
    learners = bound_names(request.code) - set(dir(builtins))
    return tuple(sorted(author | learners)), tuple(sorted(author))
