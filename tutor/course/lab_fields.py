"""Reading a lab's format-2 keys: named tests, source rules, wrong submissions, extra files, chained stages.

See lessons/README.md ("Labs") for what each means to an author; the sandbox side
(running the tests, checking the rules on the learner's syntax tree) is
``tutor/sandbox/inner/labkit.py``.
"""

from __future__ import annotations

from typing import Any

from tutor.course import fields
from tutor.course.reader import Reader, join
from tutor.course.schema import (MODULE_NAME, RULES_TEST, LabFile, LabTest, SourceRules, StageUse, WrongSubmission,
                                 is_safe_id)
from tutor.course.yaml_source import MarkedDict

CHECK_TEST = "check"  # a lab graded by one `check:` block reports it as a single test of this name
MAX_TESTS = 64


def positioned(items, key: str, path: str):
    """Each item of the marked sequence ``items`` (``data[key]``) as ``(where, item, mark)``."""
    for i, item in enumerate(items):
        yield f"{join(path, key)}[{i}]", item, items.item_marks[i]


def _mappings(reader: Reader, items, key: str, path: str, required: set[str], optional: set[str]):
    """Each item of ``items`` that is a mapping with the right keys, as ``(where, mapping, mark)``;
    the others are errors at their own position."""
    for where, item, mark in positioned(items, key, path):
        mapping = reader.mapping(item, where, mark, required, optional)
        if mapping is not None:
            yield where, mapping, mark


def _tests(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> tuple[LabTest, ...]:
    items = reader.sequence(data, key, path)
    if key in data and not items:
        reader.error(reader.key_mark(data, key), join(path, key), "list at least one test")
    if len(items) > MAX_TESTS:
        reader.error(reader.key_mark(data, key), join(path, key), f"at most {MAX_TESTS} tests per lab")
    out: list[LabTest] = []
    for where, test, mark in _mappings(reader, items, key, path, fields.TEST_REQUIRED, fields.TEST_OPTIONAL):
        name = reader.identifier(test, "name", where)
        if name in (RULES_TEST, CHECK_TEST):
            reader.error(reader.key_mark(test, "name"), join(where, "name"), f"{name!r} is reserved; choose another")
        elif name and any(t.name == name for t in out):
            reader.error(reader.key_mark(test, "name"), join(where, "name"), f"two tests are named {name!r}")
        check = reader.code(test, "check", where)
        if "check" in test and not check.strip():
            reader.error(reader.key_mark(test, "check"), join(where, "check"), "must not be empty")
        out.append(LabTest(name=name, check=check, probe=reader.code(test, "probe", where),
                           hints=reader.text_list(test, "hints", where), line=mark[0]))
    return tuple(out)


def _rules(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> SourceRules | None:
    where = join(path, key)
    rules = reader.mapping(data[key], where, reader.key_mark(data, key), set(), fields.RULE_KEYS)
    if rules is None:
        return None
    names = {k: (reader.text_list(rules, k, where) if k in rules else None)
             for k in ("allow_names", "allow_attributes", "allow_calls", "forbid_names", "forbid_modules",
                       "forbid_attributes")}
    flags = {}
    for flag in ("no_loops", "no_comprehensions", "no_imports"):
        raw = rules.get(flag, False)
        if not isinstance(raw, bool):
            reader.error(reader.key_mark(rules, flag), join(where, flag), "expected true or false")
        flags[flag] = raw is True
    limits = {}
    for limit in ("max_lines", "max_columns"):
        raw = rules.get(limit)
        if raw is not None and (isinstance(raw, bool) or not isinstance(raw, int) or not 0 < raw <= 10_000):
            reader.error(reader.key_mark(rules, limit), join(where, limit), "expected a whole number from 1 to 10000")
            raw = None
        limits[limit] = raw
    if not rules:
        reader.error(reader.key_mark(data, key), where, f"name at least one rule ({', '.join(sorted(fields.RULE_KEYS))})")
    return SourceRules(**names, **flags, **limits)


def _wrong_submissions(reader: Reader, data: MarkedDict, key: str, path: str, values: dict):
    items = reader.sequence(data, key, path)
    if key in data and not items:
        reader.error(reader.key_mark(data, key), join(path, key), "list at least one wrong submission")
    out: list[WrongSubmission] = []
    for where, w, _ in _mappings(reader, items, key, path, fields.WRONG_SUBMISSION_REQUIRED,
                                 fields.WRONG_SUBMISSION_OPTIONAL):
        code = reader.code(w, "code", where)
        if ("code" in w) == ("change" in w):
            reader.error(w.mark, where, "give the submission as `code:` or as `change:` edits of the solution (one)")
        elif "change" in w:
            code = _changed_solution(reader, w, where, values.get("solution", ""))
        files = _file_codes(reader, w, where)
        out.append(WrongSubmission(code=code, test=reader.text(w, "test", where),
                                   misconception=reader.text(w, "misconception", where), files=files,
                                   says=reader.text(w, "says", where, default="")))
        values.setdefault("_test_marks", []).append((reader.key_mark(w, "test"), join(where, "test")))
    return tuple(out)


def _changed_solution(reader: Reader, w: MarkedDict, where: str, solution: str) -> str:
    """The solution with each ``{from, to}`` edit applied; each ``from`` must occur exactly once."""
    edits = reader.sequence(w, "change", where)
    if not edits:
        reader.error(reader.key_mark(w, "change"), join(where, "change"), "list at least one {from: …, to: …} edit")
    code, before = solution, len(reader.errors)
    for at, edit, _ in _mappings(reader, edits, "change", where, fields.CHANGE_REQUIRED, set()):
        old, new = reader.text(edit, "from", at), reader.text(edit, "to", at, default="")
        if old and code.count(old) != 1:
            reader.error(reader.key_mark(edit, "from"), join(at, "from"),
                         f"the solution holds this text {code.count(old)} times; an edit needs it exactly once")
            continue
        code = code.replace(old, new)
    if code == solution and edits and len(reader.errors) == before:
        reader.error(reader.key_mark(w, "change"), join(where, "change"), "these edits leave the solution unchanged")
    try:
        compile(code, "<wrong submission>", "exec")
    except SyntaxError as exc:
        reader.error(reader.key_mark(w, "change"), join(where, "change"),
                     f"the edited solution is not valid Python (line {exc.lineno}: {exc.msg})")
    return code


def _file_codes(reader: Reader, w: MarkedDict, where: str) -> tuple[tuple[str, str], ...]:
    if "files" not in w:
        return ()
    files = w["files"]
    if not isinstance(files, MarkedDict):
        reader.error(reader.key_mark(w, "files"), join(where, "files"), "expected a mapping of file name to code")
        return ()
    out = []
    for name in files:
        out.append((name, reader.code(files, name, join(where, "files"))))
    return tuple(out)


def _module_name(reader: Reader, data: MarkedDict, key: str, where: str) -> str:
    name = reader.text(data, key, where)
    if name and not MODULE_NAME.fullmatch(name):
        reader.error(reader.key_mark(data, key), join(where, key),
                     f"{name[:60]!r} is not a Python module name (letters, digits and _, not starting with a digit)")
        return ""
    return name


def _files(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> tuple[LabFile, ...]:
    out: list[LabFile] = []
    for where, f, _ in _mappings(reader, reader.sequence(data, key, path), key, path, fields.FILE_REQUIRED, set()):
        name = _module_name(reader, f, "name", where)
        if name and any(x.name == name for x in out):
            reader.error(reader.key_mark(f, "name"), join(where, "name"), f"two files are named {name!r}")
        out.append(LabFile(name=name, starter=reader.code(f, "starter", where),
                           solution=reader.code(f, "solution", where)))
    return tuple(out)


def _uses(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> tuple[StageUse, ...]:
    out: list[StageUse] = []
    for where, u, _ in _mappings(reader, reader.sequence(data, key, path), key, path, fields.USE_REQUIRED,
                                 fields.USE_OPTIONAL):
        lab = reader.text(u, "lab", where)
        parts = lab.split("/")
        if lab and (len(parts) > 2 or not all(is_safe_id(p) for p in parts)):
            reader.error(reader.key_mark(u, "lab"), join(where, "lab"),
                         f"{lab[:80]!r}: name an earlier lab as <module>/<drill id>, or <drill id> in this module")
            continue
        changes = []
        if "change" in u:
            edits = reader.sequence(u, "change", where)
            if not edits:
                reader.error(reader.key_mark(u, "change"), join(where, "change"), "list at least one {from: …, to: …} edit")
            for at, edit, _ in _mappings(reader, edits, "change", where, fields.CHANGE_REQUIRED, set()):
                changes.append((reader.text(edit, "from", at), reader.text(edit, "to", at, default="")))
        as_of = reader.text(u, "as_of", where, default="") if "as_of" in u else ""
        if as_of and changes:
            reader.error(reader.key_mark(u, "as_of"), join(where, "as_of"), "give `change:` edits or `as_of:`, not both")
        out.append(StageUse(lab=lab, name=_module_name(reader, u, "as", where), changes=tuple(changes), as_of=as_of))
    return tuple(out)


def _flag(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> bool:
    raw = data[key]
    if not isinstance(raw, bool):
        reader.error(reader.key_mark(data, key), join(path, key), "expected true or false")
        return False
    return raw


READERS = {"tests": _tests, "rules": _rules, "wrong_submissions": _wrong_submissions, "files": _files,
           "uses": _uses, "flag": _flag}


def lab_rules(reader: Reader, data: MarkedDict, path: str, values: dict[str, Any]) -> None:
    """A lab is graded by `check:` or `tests:`; a wrong submission names a test that exists."""
    tests: tuple[LabTest, ...] = values.get("tests", ())
    if not values.get("check", "").strip() and not tests:
        reader.error(data.mark, join(path, "tests" if "tests" in data else "check"),
                     "a lab needs `tests:` (or, in format 1, a `check:`) that the solution passes and the starter fails")
    names = {t.name for t in tests}
    if values.get("check", "").strip():
        names.add(CHECK_TEST)
    if values.get("rules") is not None:
        names.add(RULES_TEST)
    for wrong, (mark, where) in zip(values.get("wrong_submissions", ()), values.get("_test_marks", ())):
        if wrong.test and wrong.test not in names:
            reader.error(mark, where, f"no test named {wrong.test!r} (this lab's: {', '.join(sorted(names))})")
    lab_files = {f.name for f in values.get("files", ())}
    # a stage (`uses:`) is the learner's own earlier file, so a wrong submission may replace it too:
    # the mistake can sit in the stage this lab asks the learner to extend (35's model.py)
    replaceable = lab_files | {u.name for u in values.get("uses", ())}
    for wrong in values.get("wrong_submissions", ()):
        for name, _code in wrong.files:
            if name not in replaceable:
                reader.error(data.mark, join(path, "wrong_submissions"),
                             f"a wrong submission replaces {name!r}, which is not one of the lab's `files:` "
                             "or `uses:` stages")
    taken = lab_files | {u.name for u in values.get("uses", ())}
    if len(taken) < len(values.get("files", ())) + len(values.get("uses", ())):
        reader.error(data.mark, path, "a lab's `files:` and `uses:` must have different module names")


def repair_rules(reader: Reader, data: MarkedDict, path: str, values: dict[str, Any]) -> None:
    """A repair's wrong fix is rejected by the repair's one `check:`, with words it pins (`says:`).

    A repair has no named tests and no other files: each wrong fix is the code a learner would
    submit (``code:``, or ``change:`` edits of the solution), and ``check`` proves that the check's
    own assertion rejects it with ``says`` in its message.
    """
    for i, (wrong, (mark, where)) in enumerate(zip(values.get("wrong_submissions", ()),
                                                   values.get("_test_marks", ()))):
        if wrong.test and wrong.test != CHECK_TEST:
            reader.error(mark, where, f"a repair is graded by its `check:`: write `test: {CHECK_TEST}`, "
                                      f"not {wrong.test[:40]!r}")
        item = join(path, "wrong_submissions") + f"[{i}]"
        if not wrong.says.strip():
            reader.error(mark, item, "say which words of the check's message reject this fix (`says:`)")
        if wrong.files:
            reader.error(mark, item, "a repair has one file: give the wrong fix as `code:` or `change:`, not `files:`")
