"""Reading a module file's marked YAML tree into the schema's types (``schema.py``).

Validation collects every problem it finds (each with file:line:column and the
field's dotted path) rather than stopping at the first, so an author fixes a
file in one pass. Unknown keys are errors: a typo such as ``hint:`` for
``hints:`` must not silently drop content. Which keys exist is declared once,
in ``fields.py``.
"""

from __future__ import annotations

from typing import Any, Callable

from tutor.course import ask_fields, data_files, divergence_fields, fields, lab_fields, variants, view_fields
from tutor.course.errors import LessonError
from tutor.course.reader import Reader, join, type_name
from tutor.course.schema import (DEFAULT_TIMEOUT, MAX_TIMEOUT, READABLE_VERSIONS, Ask, Drill, DrillKind, Module,
                                 SelfCheck, file_stem, is_safe_id)
from tutor.course.yaml_source import Mark, MarkedDict
from tutor.sandbox.wire import GRANTS as SANDBOX_NEEDS  # what `needs:` may declare; the sandbox grants exactly that


def parse_module(data: Any, filename: str) -> tuple[Module | None, list[LessonError]]:
    """Turn a loaded YAML tree into a :class:`Module`, or return the errors found."""
    reader = Reader(filename)
    if not isinstance(data, MarkedDict):
        reader.error((1, 1), "", f"expected a mapping, got {type_name(data)}")
        return None, reader.errors
    version = data.get("format_version")
    if "format_version" in data and version not in READABLE_VERSIONS:
        reader.error(reader.key_mark(data, "format_version"), "format_version",
                     f"this tutor reads format_version {' or '.join(map(str, READABLE_VERSIONS))}, the file says "
                     f"{version!r}; update pytorch-tutor or migrate the file")
    version = version if version in READABLE_VERSIONS else 1
    root = reader.mapping(data, "", (1, 1), fields.MODULE_REQUIRED, fields.MODULE_OPTIONAL[version])
    assert root is not None
    module_id = reader.identifier(root, "module", "")
    intro = reader.text(root, "intro", "", default="")
    shared_setup = reader.code(root, "setup", "")
    # a module's labs share their rules unless one declares its own (which then replace them whole)
    module_rules = lab_fields.READERS["rules"](reader, root, "rules", "", {}) if "rules" in root else None

    drills: list[Drill] = []
    drill_items = reader.sequence(root, "drills", "")
    if "drills" in root and not drill_items:
        reader.error(reader.key_mark(root, "drills"), "drills", "a module needs at least one drill")
    seen: dict[str, tuple[str, int]] = {}  # file_stem(id) -> (id, line): ids may not collide as file names
    for i, item in enumerate(drill_items):
        drill = parse_drill(reader, item, f"drills[{i}]", drill_items.item_marks[i], version, shared_setup,
                            module_rules)
        if drill is None:
            continue
        stem = file_stem(drill.id)
        if stem in seen:
            first_id, first_line = seen[stem]
            same = "duplicate drill id" if first_id == drill.id else f"drill id {drill.id!r} names the same file as"
            reader.error(drill_items.item_marks[i], f"drills[{i}].id",
                         f"{same} {first_id!r} (first at line {first_line})")
        seen.setdefault(stem, (drill.id, drill.line))
        drills.append(drill)

    self_checks: list[SelfCheck] = []
    check_items = reader.sequence(root, "self_check", "")
    seen_checks: set[str] = set()
    for i, item in enumerate(check_items):
        check = _parse_self_check(reader, item, f"self_check[{i}]", check_items.item_marks[i])
        if check is None:
            continue
        if check.id in seen_checks:
            reader.error(check_items.item_marks[i], f"self_check[{i}].id", f"duplicate self-check id {check.id!r}")
        seen_checks.add(check.id)
        self_checks.append(check)

    renamed = _renamed(reader, root, {d.id for d in drills} | {c.id for c in self_checks})
    if reader.errors:
        return None, reader.errors
    return Module(module_id, filename, intro, tuple(drills), tuple(self_checks), version, shared_setup,
                  renamed=renamed, rules=module_rules), []


def _renamed(reader: Reader, root: MarkedDict, ids: set[str]) -> tuple[tuple[str, str], ...]:
    """``renamed: {old id: new id}``: each new id an item of this module, each old one no longer an item."""
    if "renamed" not in root:
        return ()
    raw = root["renamed"]
    if not isinstance(raw, MarkedDict):
        reader.error(reader.key_mark(root, "renamed"), "renamed", f"expected a mapping of old id: new id, got {type_name(raw)}")
        return ()
    out = []
    for old, new in raw.items():
        at = join("renamed", str(old))
        mark = raw.key_marks[old]
        if not isinstance(old, str) or not isinstance(new, str) or not is_safe_id(old) or not is_safe_id(new):
            reader.error(mark, at, "expected old-id: new-id, both drill or self-check ids")
        elif new not in ids:
            reader.error(mark, at, f"{new!r} is no drill or self-check of this module")
        elif old in ids:
            reader.error(mark, at, f"{old!r} is still an item of this module: progress under it is its own")
        elif new in raw:
            reader.error(mark, at, f"{new!r} is renamed again: name the last id")
        else:
            out.append((old, new))
    return tuple(out)


def _drill_kind(reader: Reader, data: MarkedDict, path: str, version: int) -> DrillKind | None:
    if version == 1 or "kind" not in data:
        return fields.infer_kind_v1(data) if version == 1 else DrillKind.PREDICTION
    raw = data["kind"]
    try:
        return DrillKind(raw)
    except ValueError:
        reader.error(reader.key_mark(data, "kind"), join(path, "kind"),
                     f"unknown drill kind {str(raw)[:40]!r} (known: {', '.join(k.value for k in DrillKind)})")
        return None


def parse_drill(reader: Reader, item: Any, path: str, mark: Mark, version: int, shared_setup: str = "",
                module_rules=None) -> Drill | None:
    if not isinstance(item, MarkedDict):
        reader.error(mark, path, f"expected a mapping, got {type_name(item)}")
        return None
    before = len(reader.errors)
    kind = _drill_kind(reader, item, path, version)
    if kind is None:
        return None
    required, optional = fields.keys_for(kind, version)
    for key in item:
        if key in required or key in optional:
            continue
        why = fields.misplaced(key, kind, version, "kind" in item)
        if why is None:
            why = f"unknown key (allowed: {', '.join(sorted(required | optional))})"
        reader.error(item.key_marks[key], join(path, key), why)
    for key in sorted(required - set(item)):
        reader.error(item.mark, join(path, key), "required key is missing")
    if len(reader.errors) > before:
        return None

    values: dict[str, Any] = {}
    try:
        for spec in fields.DRILL_FIELDS:
            if spec.key in item:
                values[spec.key] = READERS[spec.read](reader, item, spec.key, path, values)
                if spec.key == "variants" and values[spec.key] is not None:  # the code compiles as its first instance
                    reader.instance = (values[spec.key].corners or values[spec.key].instances)[0]
    finally:
        reader.instance = ()
    # format 3 only: in a file of format 1 or 2, `{{x}}` is plain Python (an f-string's brace) and stays unchecked
    if version >= 3 and ("variants" not in item or values.get("variants") is not None):
        for field, message in variants.placeholder_problems(values, values.get("variants")):
            key = field.split("[")[0] if field.split("[")[0] in item else "variants"
            reader.error(reader.key_mark(item, key), join(path, field), message)
    if kind is DrillKind.LAB and "rules" not in values and module_rules is not None:
        values["rules"] = module_rules  # the module's, as if the lab had declared them
    _cross_field_rules(reader, item, path, kind, values)
    view_fields.version_problems(reader, item, path, version)
    if len(reader.errors) > before:
        return None
    drill_id = values["id"]
    drill = Drill(
        id=drill_id,
        title=values.get("title") or drill_id.replace("-", " "),
        prompt=values["prompt"],
        code=values.get("code") or values.get("starter", ""),
        asks=values.get("ask", ()) or _divergence_asks(kind, values),
        explanation=values["explanation"],
        hints=values["hints"],
        wrong_answers=values.get("wrong_answers", ()),
        setup=values.get("setup", ""),
        check=values.get("check", ""),
        solution=values.get("solution", ""),
        timeout=values.get("timeout") or DEFAULT_TIMEOUT,
        timeout_reason=values.get("timeout_reason", ""),
        fixtures=values.get("fixtures", ""),
        tags=values.get("tags", ()),
        gpu_note=values.get("gpu_note", ""),
        starter=values.get("starter", ""),
        needs=values.get("needs", ()),
        threads=values.get("threads", 0),
        vary=values.get("vary", ""),
        probe=values.get("probe", ""),
        line=mark[0],
        kind=kind,
        module_setup=shared_setup,
        tests=values.get("tests", ()),
        rules=values.get("rules"),
        wrong_submissions=values.get("wrong_submissions", ()),
        files=values.get("files", ()),
        uses=values.get("uses", ()),
        show_tests=values.get("show_tests", False),
        symptoms_first=values.get("symptoms_first", False),
        data=values.get("data", ()),
        divergence=divergence_fields.build(values),
        views=values.get("views", ()),
        variants=values.get("variants"),
    )
    return variants.present_drill_instance(drill, None)  # a variant drill loads as its base instance


def _cross_field_rules(reader: Reader, data: MarkedDict, path: str, kind: DrillKind, values: dict) -> None:
    """What one key alone cannot say: non-empty code, a reason for a long limit, a lab's tests."""
    for key in ("code", "starter", "solution"):
        if key in data and not values.get(key, "").strip():
            reader.error(reader.key_mark(data, key), join(path, key), "must not be empty")
    if "ask" in data and not values.get("ask") and not _errors_at(reader, join(path, "ask")):
        reader.error(reader.key_mark(data, "ask"), join(path, "ask"), "a drill asks for at least one prediction")
    if "vary" in data and "variants" in data:
        reader.error(reader.key_mark(data, "vary"), join(path, "vary"),
                     "a drill with `variants:` varies: `vary:` says why one has none")
    elif "vary" in data and len(values.get("vary", "").split()) < 3:
        reader.error(reader.key_mark(data, "vary"), join(path, "vary"),
                     "say in a sentence why no instance of this drill could differ (what is fixed)")
    timeout = values.get("timeout") or DEFAULT_TIMEOUT
    if timeout > DEFAULT_TIMEOUT and not values.get("timeout_reason", "").strip():
        reader.error(reader.key_mark(data, "timeout"), join(path, "timeout"),
                     f"a limit above {DEFAULT_TIMEOUT:g} s needs a `timeout_reason`")
    if kind is DrillKind.REPAIR and not values.get("check", "").strip():
        reader.error(reader.key_mark(data, "solution"), join(path, "solution"),
                     "a repair drill needs a `check` that the solution passes and the code fails")
    if kind is DrillKind.LAB:
        lab_fields.lab_rules(reader, data, path, values)
    if kind in (DrillKind.REPAIR, DrillKind.FIRST_DIVERGENCE):  # a first-divergence drill's repair is judged too
        lab_fields.repair_rules(reader, data, path, values)
    if kind is DrillKind.FIRST_DIVERGENCE:
        divergence_fields.divergence_rules(reader, data, path, values)


def _divergence_asks(kind: DrillKind, values: dict) -> tuple[Ask, ...]:
    """A first-divergence drill asks one thing: the line (or stage) where a contract first fails."""
    if kind is not DrillKind.FIRST_DIVERGENCE:
        return ()
    stages = values.get("stages", ())
    return (Ask(key=divergence_fields.ASK_KEY, expr=None, kind="line", question=divergence_fields.question(stages),
                options=tuple(s.name for s in stages)),)


def _errors_at(reader: Reader, field_path: str) -> bool:
    return any(e.field.startswith(field_path) for e in reader.errors)


# ---------------------------------------------------------------- value readers (named in fields.py)

def _kind_value(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> str:
    return str(data[key])  # already read by _drill_kind


def _seconds(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> float | None:
    return reader.number(data, key, path, 0, MAX_TIMEOUT, f"seconds between 0 and {MAX_TIMEOUT:g}")


MAX_THREADS = 64


def _threads(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> int:
    raw = data[key]
    if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= MAX_THREADS:
        reader.error(reader.key_mark(data, key), join(path, key), f"expected a whole number of threads, 1 to {MAX_THREADS}")
        return 0
    return raw


def _needs(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> tuple[str, ...]:
    needs = reader.text_list(data, key, path)
    for need in needs:
        if need not in SANDBOX_NEEDS:
            reader.error(reader.key_mark(data, key), join(path, key),
                         f"unknown need {need!r} (the sandbox can grant: {', '.join(SANDBOX_NEEDS)})")
    return needs


def _hints(reader: Reader, data: MarkedDict, key: str, path: str, values: dict) -> tuple[str, ...]:
    if values.get("kind") == DrillKind.FIRST_DIVERGENCE:  # a tier may be {trace_until: N}
        hints, values["_trace_until"] = divergence_fields.divergence_hints(reader, data, key, path, values)
        return hints
    hints = reader.text_list(data, key, path)
    if key in data and not hints and not _errors_at(reader, join(path, key)):
        reader.error(reader.key_mark(data, key), join(path, key), "give at least one hint")
    return hints


def _text_reader(kind: str) -> Callable:
    def read(reader: Reader, data: MarkedDict, key: str, path: str, values: dict):
        if kind == "text":
            return reader.text(data, key, path)
        if kind == "optional_text":
            return reader.text(data, key, path, default="")
        if kind == "id":
            return reader.identifier(data, key, path)
        if kind == "code":
            return reader.code(data, key, path)
        return reader.text_list(data, key, path)

    return read


READERS: dict[str, Callable[[Reader, MarkedDict, str, str, dict], Any]] = {
    "id": _text_reader("id"), "text": _text_reader("text"), "optional_text": _text_reader("optional_text"),
    "code": _text_reader("code"), "texts": _text_reader("texts"), "kind": _kind_value, "seconds": _seconds, "threads": _threads,
    "needs": _needs, "hints": _hints, **ask_fields.READERS, **lab_fields.READERS,
    "data": data_files.read_names,
    **divergence_fields.READERS,
    "views": view_fields.read_views,
    "variants": variants.read_variants,
}


def _parse_self_check(reader: Reader, item: Any, path: str, mark: Mark) -> SelfCheck | None:
    data = reader.mapping(item, path, mark, fields.SELF_CHECK_REQUIRED, fields.SELF_CHECK_OPTIONAL)
    if data is None:
        return None
    before = len(reader.errors)
    options = reader.text_list(data, "options", path)
    correct = None
    if options:
        raw = data.get("correct")
        if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw < len(options):
            reader.error(reader.key_mark(data, "correct") if "correct" in data else data.mark, f"{path}.correct",
                         f"multiple choice needs `correct`: the 0-based index of the right option (0..{len(options) - 1})")
        else:
            correct = raw
    elif "correct" in data:
        reader.error(reader.key_mark(data, "correct"), f"{path}.correct", "`correct` only goes with `options`")
    points = reader.text_list(data, "points", path)
    if "points" in data and options:
        reader.error(reader.key_mark(data, "points"), f"{path}.points",
                     "`points` is the rubric of a free-text answer; a multiple-choice question is judged by `correct`")
    elif "points" in data and not MIN_POINTS <= len(points) <= MAX_POINTS:
        reader.error(reader.key_mark(data, "points"), f"{path}.points",
                     f"a rubric lists {MIN_POINTS} to {MAX_POINTS} points the model answer makes (this one has {len(points)})")
    elif any(len(point) > MAX_POINT_CHARS for point in points):
        reader.error(reader.key_mark(data, "points"), f"{path}.points",
                     f"a rubric point is one short line (at most {MAX_POINT_CHARS} characters): the model answer says the rest")
    check = SelfCheck(
        id=reader.identifier(data, "id", path),
        question=reader.text(data, "question", path),
        answer=reader.text(data, "answer", path),
        options=options,
        correct=correct,
        points=points,
    )
    return None if len(reader.errors) > before else check


MIN_POINTS, MAX_POINTS, MAX_POINT_CHARS = 2, 4, 160
