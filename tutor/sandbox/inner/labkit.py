"""The sandbox's lab machinery: course modules from text, named tests, rules on the learner's source.

Runs only inside the sandbox (standard library only, like ``exchange``); the
tutor imports :func:`fingerprint` from here so that both sides normalise source
the same way. Tests, errors and results are the wire's types (``TestSpec``,
``ErrorInfo``, ``TestResult``).

* **Course modules** (a course's ``helpers/*.py``, a lab's other files, earlier
  stages of a chained lab) arrive as text in the run request and are served by a
  dict-backed import hook: nothing of a course is ever a file on the sandbox's
  path, and each process gets its own fresh copy, so what the learner's code does
  to a helper in its process never reaches the judge's.
* **Named tests**: a test's ``probe`` runs in the learner's process (binding data),
  its ``check`` in the judge's, each in its own copy of the namespace so that one
  test cannot change what the next sees; each reports on its own.
* **Source rules** are checked on the learner's syntax tree (``ast``, stable across
  Python versions) in the judge's process: the learner's text is data there.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.abc
import importlib.util
import io
import sys
import tokenize

from tutor.sandbox.wire import ErrorInfo, TestResult, TestSpec

RULES_TEST = "source-rules"
MAX_MESSAGE = 2000


# ---------------------------------------------------------------- course modules from text


class TextModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports ``name`` from ``sources[name]``; a dotted name's parents become packages."""

    def __init__(self, sources: dict[str, str]):
        self.sources = dict(sources)
        self.packages = {name.rsplit(".", i)[0] for name in self.sources for i in range(1, name.count(".") + 1)}

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.sources or fullname in self.packages:
            spec = importlib.util.spec_from_loader(fullname, self, origin=f"<course module {fullname}>",
                                                   is_package=fullname in self.packages)
            return spec
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        module.__file__ = f"<course module {name}>"
        source = self.sources.get(name, "")
        exec(compile(source, module.__file__, "exec"), module.__dict__)

    def get_source(self, fullname):
        return self.sources.get(fullname)


def install_modules(sources: dict[str, str]) -> None:
    """Make ``sources`` importable in this process, ahead of the path (names are checked by the tutor)."""
    if sources:
        sys.meta_path.insert(0, TextModules(sources))


# ---------------------------------------------------------------- named tests


def run_probes(tests: tuple[TestSpec, ...], namespace: dict, run) -> dict[str, ErrorInfo]:
    """Each test's probe, in the learner's process; what each raised, by test name."""
    failures = {}
    for test in tests:
        if test.probe.strip():
            _exc, info = run(test.probe, f"<test {test.name}>", namespace, "probe")
            if info is not None:
                failures[test.name] = info
    return failures


def run_tests(tests: tuple[TestSpec, ...], namespace: dict, probe_errors: dict[str, ErrorInfo], run,
              code_error: ErrorInfo | None) -> list[TestResult]:
    """Each test's check, in the judge's process, on a copy of the namespace; one result per test."""
    results = []
    for test in tests:
        name = test.name
        if code_error is not None:
            results.append(_result(name, "failed", "your code raised " + _describe(code_error)))
            continue
        if name in probe_errors:
            info = probe_errors[name]
            results.append(_result(name, "failed", f"calling your code raised {_describe(info)}"))
            continue
        exc, info = run(test.check, f"<test {name}>", dict(namespace), "check")
        if exc is None:
            results.append(_result(name, "passed"))
        elif isinstance(exc, AssertionError):
            results.append(_result(name, "failed", str(exc), info.line))
        else:
            results.append(_result(name, "error", f"{info.type}: {info.message}", info.line))
    return results


def _describe(info: ErrorInfo) -> str:
    return f"{info.type or 'an error'}: {info.message}".rstrip(": ")


def _result(name: str, status: str, message: str = "", line: int | None = None) -> TestResult:
    return TestResult(name, status, message[:MAX_MESSAGE], line)


# ---------------------------------------------------------------- rules on the learner's source

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def check_rules(rules: dict, sources: dict[str, str]) -> TestResult:
    """The source-rules test: every broken rule, each named with its file and line."""
    problems: list[str] = []
    for filename, source in sources.items():
        problems.extend(f"{filename}: {p}" if len(sources) > 1 else p for p in _file_problems(rules, source))
    if not problems:
        return _result(RULES_TEST, "passed")
    shown = problems[:8] + ([f"... and {len(problems) - 8} more"] if len(problems) > 8 else [])
    return _result(RULES_TEST, "failed", "\n".join(shown))


def _file_problems(rules: dict, source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"line {exc.lineno}: syntax error: {exc.msg}"]
    except (ValueError, RecursionError, MemoryError):
        return ["the file could not be read as Python"]
    problems = []
    lines = _code_lines(source)
    if rules.get("max_lines") and len(lines) > rules["max_lines"]:
        problems.append(f"rule max_lines: {len(lines)} lines of code, at most {rules['max_lines']} allowed "
                        "(blank lines and comments do not count)")
    if rules.get("max_columns"):
        for number, text in enumerate(source.splitlines(), 1):
            if len(text) > rules["max_columns"]:
                problems.append(f"line {number}: rule max_columns: {len(text)} columns, at most {rules['max_columns']}")
                break
    bound = _bound_names(tree)
    allow_names = set(rules["allow_names"]) if "allow_names" in rules else None
    allow_attributes = set(rules["allow_attributes"]) if "allow_attributes" in rules else None
    allow_calls = set(rules["allow_calls"]) if "allow_calls" in rules else None
    forbid_names = {n for n in rules.get("forbid_names", ()) if "." not in n}
    problems.extend(f"line {line}: rule forbid_modules: `{name}` may not be imported in this lab: it holds the "
                    "code this lab asks you to write, and the lab grades your own"
                    for line, name in forbidden_imports(tree, rules.get("forbid_modules", ())))
    # a dotted name (`torch.autograd`) is forbidden wherever the code reaches it: imported, or read as an attribute
    problems.extend(f"line {line}: rule forbid_names: `{name}` may not be used in this lab"
                    for line, name in forbidden_imports(tree, [n for n in rules.get("forbid_names", ()) if "." in n]))
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        for used in _used_names(node) if forbid_names else ():
            if used in forbid_names:
                problems.append(f"line {line}: rule forbid_names: `{used}` may not be used in this lab")
        if rules.get("no_loops") and isinstance(node, _LOOPS):
            problems.append(f"line {line}: rule no_loops: a `{type(node).__name__.lower()}` loop")
        elif rules.get("no_comprehensions") and isinstance(node, _COMPREHENSIONS):
            problems.append(f"line {line}: rule no_comprehensions: a comprehension")
        elif rules.get("no_imports") and isinstance(node, (ast.Import, ast.ImportFrom)):
            problems.append(f"line {line}: rule no_imports: an import")
        elif allow_names is not None and isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id not in bound and node.id not in allow_names:
                problems.append(f"line {line}: rule allow_names: `{node.id}` is not allowed here "
                                f"(allowed: {', '.join(sorted(allow_names)) or 'only your own names'})")
        elif allow_names is not None and isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:  # an imported name is not the file's own: it must be allowed too
                name = (alias.asname or alias.name).split(".")[0]
                if name not in allow_names:
                    problems.append(f"line {line}: rule allow_names: importing `{name}` is not allowed here "
                                    f"(allowed: {', '.join(sorted(allow_names)) or 'only your own names'})")
        if isinstance(node, ast.Attribute) and node.attr in rules.get("forbid_attributes", ()):
            problems.append(f"line {line}: rule forbid_attributes: `.{node.attr}` may not be used in this lab")
        if allow_attributes is not None and isinstance(node, ast.Attribute):
            if node.attr not in allow_attributes:
                problems.append(f"line {line}: rule allow_attributes: `.{node.attr}` is not allowed "
                                f"(allowed: {', '.join(sorted(allow_attributes)) or 'none'})")
        if allow_calls is not None and isinstance(node, ast.Call):
            called = _dotted(node.func)
            if called is not None and called.split(".")[0] not in bound and called not in allow_calls:
                problems.append(f"line {line}: rule allow_calls: calling `{called}` is not allowed "
                                f"(allowed: {', '.join(sorted(allow_calls)) or 'none'})")
    return sorted(_unique(problems), key=_line_of)


def forbidden_imports(tree: ast.AST, modules) -> list[tuple[int, str]]:
    """(line, module) for every import of one of ``modules`` (or a submodule) in the syntax tree:
    ``import m``, ``from m import x``, ``from parent import leaf``, and ``parent.leaf`` read through
    an imported parent package (a package holds each submodule that anything imported as an
    attribute). Static imports only: ``importlib`` and ``__import__`` need ``forbid_names``."""
    forbidden = tuple(modules)
    if not forbidden:
        return []

    def hit(name: str) -> str | None:
        return next((m for m in forbidden if name == m or name.startswith(m + ".")), None)

    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            dotted = _dotted(node)
            names = [dotted] if dotted else []
        module = next((m for m in map(hit, names) if m), None)
        if module is not None:
            found.append((getattr(node, "lineno", 0), module))
    return sorted(set(found))


def _line_of(problem: str) -> int:
    head = problem.split(":", 1)[0]
    return int(head[5:]) if head.startswith("line ") and head[5:].isdigit() else 0


def _code_lines(source: str) -> list[int]:
    """Line numbers that hold code (not blank, not only a comment)."""
    lines = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                tokenize.ENDMARKER, tokenize.ENCODING):
                lines.update(range(tok.start[0], tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return [n for n, t in enumerate(source.splitlines(), 1) if t.strip() and not t.strip().startswith("#")]
    return sorted(lines)


def _bound_names(tree: ast.AST) -> set[str]:
    """Names the file binds itself: its functions, classes, parameters and assignments (not imports)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
    return bound


def _used_names(node: ast.AST) -> list[str]:
    """The names a node reads or imports: a name read (``torch`` of ``torch.zeros``; an attribute's name is
    not one: forbidding `sum` leaves `x.sum()` alone, and `torch.autograd` is forbidden by its dotted name),
    every part of an imported module's name (``torch``, ``autograd`` of ``import torch.autograd``) and each
    name a ``from`` import binds."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, ast.Import):
        return [part for a in node.names for part in a.name.split(".")]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return node.module.split(".") + [a.name for a in node.names]
    return []


def _dotted(func: ast.AST) -> str | None:
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None  # a call on a computed value: its attributes are what allow_attributes checks
    parts.append(func.id)
    return ".".join(reversed(parts))


def _unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    return [i for i in items if not (i in seen or seen.add(i))]


# ---------------------------------------------------------------- matching a submission


def fingerprint(source: str) -> str:
    """The same for two sources that differ only in layout, comments and docstrings ("" if unreadable)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(tree, annotate_fields=False).encode()).hexdigest()[:32]
