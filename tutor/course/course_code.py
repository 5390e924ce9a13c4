"""A course's shared code: ``helpers/*.py`` beside ``course.yaml``, and the earlier stages chained labs use.

Helper modules are read here only as text (size, UTF-8, a syntax check, a name
that shadows nothing the sandbox imports); they are imported only inside the
sandbox, where ``labkit`` serves them from that text to drills and graders. No
file of a course is ever imported or run in the tutor's own process.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import replace
from pathlib import Path

from tutor.course.errors import LessonError
from tutor.course.schema import MODULE_NAME, DrillKind, Module, Stage

HELPERS_DIR = "helpers"
MAX_HELPER_BYTES = 256 * 1024
MAX_HELPERS_BYTES = 1 << 20
MAX_HELPERS = 32


@functools.cache
def reserved_names() -> frozenset[str]:
    """What a helper may not be called: any top-level module a drill can import in the sandbox.

    The sandbox runs this same interpreter, so that is every module installed for it (torch
    and what it imports, numpy, ...: the package list of its ``sys.path``), the tutor, the
    capstone package the built-in course uses, and the module that serves a drill's data
    files. (The standard library is refused separately, by ``sys.stdlib_module_names``.) A
    helper of such a name would replace that module for every drill of the course.
    """
    import pkgutil

    from tutor.course.data_files import MODULE as DATA_MODULE

    here = os.getcwd()  # `python -m tutor` puts the working directory first: an author's files are not installed
    paths = [p for p in sys.path if p and os.path.isdir(p) and os.path.abspath(p) != here]
    served = {"proptest"}  # every drill imports it from the sandbox itself (tutor/sandbox/inner/proptest.py)
    return frozenset({m.name for m in pkgutil.iter_modules(paths)} | {"tutor", "capstone", DATA_MODULE} | served)


def load_helpers(root: Path, shown_root: str) -> tuple[tuple[tuple[str, str], ...], list[LessonError]]:
    """The course's helper modules as (name, source), and the problems found with them."""
    directory = Path(root) / HELPERS_DIR
    if not directory.is_dir():
        return (), []
    errors: list[LessonError] = []
    helpers: list[tuple[str, str]] = []
    total = 0
    for path in sorted(directory.iterdir()):
        shown = f"{shown_root}/{HELPERS_DIR}/{path.name}" if shown_root else f"{HELPERS_DIR}/{path.name}"
        if path.suffix != ".py" or path.name.startswith("."):
            continue
        name = path.stem

        def problem(message: str, line: int = 1, column: int = 1) -> None:
            errors.append(LessonError(shown, line, column, "", message))

        if not MODULE_NAME.fullmatch(name) or "." in name:
            problem(f"{name[:60]!r} is not a Python module name (letters, digits and _)")
            continue
        if name in sys.stdlib_module_names or name in reserved_names():
            problem(f"a helper named {name!r} would hide the module of that name that drills import; rename it")
            continue
        try:
            if not path.resolve().is_relative_to(Path(root).resolve()) or not path.is_file():
                problem("a helper must be a file inside the course directory (not a link out of it)")
                continue
            raw = path.read_bytes()
        except OSError as exc:
            problem(f"cannot read: {exc.strerror}")
            continue
        total += len(raw)
        if len(raw) > MAX_HELPER_BYTES or total > MAX_HELPERS_BYTES or len(helpers) >= MAX_HELPERS:
            problem(f"helpers are capped at {MAX_HELPERS} files, {MAX_HELPER_BYTES // 1024} KiB each and "
                    f"{MAX_HELPERS_BYTES >> 20} MiB in all")
            continue
        try:
            source = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problem(f"not valid UTF-8 (byte {exc.start})")
            continue
        try:
            compile(source, shown, "exec", dont_inherit=True)
        except SyntaxError as exc:
            problem(f"Python syntax error: {exc.msg}", exc.lineno or 1, exc.offset or 1)
            continue
        except ValueError as exc:  # e.g. a NUL byte
            problem(f"cannot be read as Python: {exc}")
            continue
        helpers.append((name, source))
    return tuple(helpers), errors


def link_labs(modules: dict[str, Module], requires: dict[str, tuple[str, ...]],
              helpers: tuple[tuple[str, str], ...]) -> tuple[dict[str, Module], list[LessonError]]:
    """Give every drill the course's helpers and resolve each chained lab's ``uses`` to its stages.

    A stage is an earlier lab: earlier in the same module, or in a module this one
    requires (directly or not), so a learner meets it first.
    """
    errors: list[LessonError] = []
    helper_names = {name for name, _ in helpers}
    linked: dict[str, Module] = {}
    for module_id, module in modules.items():
        before = _ancestors(module_id, requires)
        drills = []
        for index, drill in enumerate(module.drills):
            stages = []
            for use in drill.uses:
                stage = _resolve(use.lab, module, index, modules, before)
                if isinstance(stage, str):
                    errors.append(LessonError(module.file, drill.line, 1, f"{drill.id}.uses", stage))
                    continue
                changes = use.changes
                if use.as_of:
                    changes = _changes_as_of(use, module, index, modules, before, stage)
                    if isinstance(changes, str):
                        errors.append(LessonError(module.file, drill.line, 1, f"{drill.id}.uses", changes))
                        continue
                reference = _changed(stage[1].solution, changes)
                if reference is None:
                    errors.append(LessonError(module.file, drill.line, 1, f"{drill.id}.uses",
                                              f"{use.lab}: an edit's `from` text is not in that lab's solution "
                                              "exactly once, or the edited file is not valid Python"))
                    continue
                stages.append(Stage(use.name, stage[0], stage[1].id, reference))
            clash = sorted(({f.name for f in drill.files} | {s.name for s in stages}) & helper_names)
            if clash:
                errors.append(LessonError(module.file, drill.line, 1, drill.id,
                                          f"{', '.join(clash)}: a lab file or stage may not share a helper's name"))
            drills.append(replace(drill, helpers=helpers, stages=tuple(stages)) if helpers or stages else drill)
        linked[module_id] = replace(module, drills=tuple(drills))
    return linked, errors


def _changes_as_of(use, module: Module, index: int, modules: dict[str, Module], before: set[str], stage):
    """The edits another (earlier) lab makes to the same stage: the stage as that lab left it."""
    later = _resolve(use.as_of, module, index, modules, before)
    if isinstance(later, str):
        return later
    for other in later[1].uses:
        module_id, _, drill_id = other.lab.rpartition("/")
        if (module_id or later[0]) == stage[0] and drill_id == stage[1].id and other.changes:
            return other.changes
    return f"{use.as_of} changes no stage {use.lab!r}: `as_of` names the lab whose `change:` edits apply"


def _changed(solution: str, changes: tuple[tuple[str, str], ...]) -> str | None:
    """An earlier lab's solution with a later lab's ``{from, to}`` edits (each ``from`` exactly once)."""
    code = solution
    for old, new in changes:
        if not old or code.count(old) != 1:
            return None
        code = code.replace(old, new)
    try:
        compile(code, "<stage>", "exec")
    except SyntaxError:
        return None
    return code


def _resolve(ref: str, module: Module, index: int, modules: dict[str, Module], before: set[str]):
    module_id, _, drill_id = ref.rpartition("/")
    module_id = module_id or module.id
    target = modules.get(module_id)
    if target is None:
        return f"no written module {module_id!r} for the stage {ref!r}"
    drill = target.drill(drill_id)
    if drill is None or drill.kind is not DrillKind.LAB:
        return f"{ref!r} is not a lab of module {module_id}"
    if module_id == module.id:
        if [d.id for d in module.drills].index(drill_id) >= index:
            return f"{ref!r} comes at or after this lab; a stage must be an earlier lab"
    elif module_id not in before:
        return f"{ref!r} is in module {module_id}, which module {module.id} does not require: a learner may not have met it"
    return module_id, drill


def _ancestors(module_id: str, requires: dict[str, tuple[str, ...]]) -> set[str]:
    seen: set[str] = set()
    stack = list(requires.get(module_id, ()))
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(requires.get(current, ()))
    return seen
