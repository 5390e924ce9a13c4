"""What a learner is told about a lab before writing it: the rules their file is held to, and what is given.

A lab's `rules:` are checked on the learner's source (the test ``source-rules``); a learner who
only meets them as a failing test learns the rule by breaking it. Its setup runs before their
file, so the names it binds (helpers, data, imports) are theirs to use: those the reference
solution itself uses are listed, by signature, never by body (the rest of a setup is the tests'
machinery, a property test's `spec` or a reference model, which would give the lab away). Both front ends show these lines (plain mode, the app's lab screen).
"""

from __future__ import annotations

import ast

from tutor.course.schema import Drill, SourceRules

MAX_GIVEN = 24  # names listed; past that, "and N more"


def _listed(names) -> str:
    return ", ".join(f"`{n}`" for n in names)


def rule_lines(rules: SourceRules | None) -> list[str]:
    """Each rule of a lab as a sentence (empty: no rules)."""
    if rules is None:
        return []
    out = []
    if rules.no_loops:
        out.append("no `for` or `while` loops")
    if rules.no_comprehensions:
        out.append("no comprehensions or generator expressions")
    if rules.no_imports:
        out.append("no imports")
    if rules.max_lines:
        out.append(f"at most {rules.max_lines} lines of code (blank lines and comments do not count)")
    if rules.max_columns:
        out.append(f"lines of at most {rules.max_columns} characters")
    if rules.allow_names is not None:
        out.append(f"the only outside names it may use: {_listed(rules.allow_names) or 'none'} (your own are free)")
    if rules.allow_calls is not None:
        out.append(f"the only functions it may call: {_listed(rules.allow_calls) or 'none'} (and your own)")
    if rules.allow_attributes is not None:
        out.append(f"the only attributes and methods it may use: {_listed('.' + a for a in rules.allow_attributes) or 'none'}")
    if rules.forbid_names:
        out.append(f"it may not use {_listed(rules.forbid_names)}")
    if rules.forbid_attributes:
        out.append(f"it may not use {_listed('.' + a for a in rules.forbid_attributes)}")
    if rules.forbid_modules:
        out.append(f"it may not import {_listed(rules.forbid_modules)}")
    return out


def given_names(drill: Drill) -> list[str]:
    """What the lab's setup (the module's, then its own) binds that its reference solution uses, by signature.

    Only what the solution uses: the rest of a setup is the tests' machinery (a property test's
    `spec`, a reference model), which is not the learner's to call (and, listed, would invite it)."""
    used = _names_read(drill.solution) if drill.solution else None
    names: list[str] = []
    for source in (drill.module_setup, drill.setup):
        try:
            tree = ast.parse(source or "")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            names.extend(n for n in _given(node) if used is None or n.split("(")[0].removeprefix("class ") in used)
    unique = list(dict.fromkeys(n for n in names if not n.startswith("_")))
    return unique[:MAX_GIVEN] + ([f"and {len(unique) - MAX_GIVEN} more"] if len(unique) > MAX_GIVEN else [])


def _names_read(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _given(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        params = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
        return [f"{node.name}({', '.join(params)})"]
    if isinstance(node, ast.ClassDef):
        return [f"class {node.name}"]
    if isinstance(node, ast.Import):
        return [a.asname or a.name.split(".")[0] for a in node.names]
    if isinstance(node, ast.ImportFrom):
        return [a.asname or a.name for a in node.names if a.name != "*"]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


def brief_lines(drill: Drill) -> list[str]:
    """The lines both front ends show under a lab's prompt (empty when it has neither rules nor setup)."""
    out = []
    rules = rule_lines(drill.rules)
    if rules:
        out.append("Rules for your file (the test `source-rules` checks them): " + "; ".join(rules) + ".")
    given = given_names(drill)
    if given:
        out.append("Given before your file runs (yours to use): " + ", ".join(given) + ".")
    return out
