"""`pytorch-tutor migrate DIR|FILE`: rewrite a pack's module files in a newer format, changing nothing they mean.

A pack written once keeps validating (formats 1, 2 and 3 are all read), so a migration is for an
author who wants a newer format's keys (format 2: `kind:`, wrong repairs, labs with tests, first-divergence
drills; format 3: `variants:`). It edits the text, so comments, quoting and layout stay as written:

- 1 -> 2: the drill kinds a format-1 file leaves to inference (a `solution` makes a repair, a `starter` a
  lab) are written out as `kind:` lines;
- 2 -> 3: nothing to add; but in format 3 `{{...}}` is a placeholder, so a file whose text holds `{{`
  (a dict inside a set, an f-string's escaped brace) is refused, never silently re-read;
- then the `format_version:` line.

The result must parse, under the new version, to the same drills (ids, kinds, asks, code, checks, tests,
wrong answers and submissions) and self-checks as before, or nothing is written. The file is replaced
atomically, with the original kept beside it as `NAME.yaml.format<N>` (unless `backup=False`).
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tutor.course.schema import FORMAT_VERSION, DrillKind, Module, parse_module
from tutor.course.yaml_source import load_yaml
from tutor.course.errors import LessonFileError

_VERSION_LINE = re.compile(r"^format_version:[ \t]*(\d+)[ \t]*(#.*)?$", re.MULTILINE)
_ITEM_START = re.compile(r"^(?P<indent>[ \t]*)-[ \t]+(?P<key>[A-Za-z_][\w-]*)[ \t]*:")
# what a drill means, for the before/after comparison (everything but the format it was written in)
_IGNORED = {"line", "source_key", "format_version"}


@dataclass(frozen=True)
class Migration:
    path: Path
    before: int  # the file's format_version (0: it could not be read)
    after: int  # the version written (== before: nothing written)
    changes: tuple[str, ...] = ()
    problem: str = ""  # why nothing was written
    backup: Path | None = None


def migrate_file(path: Path, target: int = FORMAT_VERSION, write: bool = True, backup: bool = True) -> Migration:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Migration(path, 0, 0, problem=f"cannot read it: {exc}")
    module, problem = _parse(text, str(path))
    if module is None:
        return Migration(path, 0, 0, problem=f"it does not validate now; fix it first:\n{problem}")
    version = module.format_version
    if version >= target:
        return Migration(path, version, version, problem=f"already format {version}")
    lines = text.split("\n")
    changes: list[str] = []
    if version < 2 <= target:
        inserts = []
        for drill in module.drills:
            if drill.kind is DrillKind.PREDICTION:
                continue  # format 2's default
            start = drill.line - 1
            found = _ITEM_START.match(lines[start]) if 0 <= start < len(lines) else None
            if found is None:
                return Migration(path, version, version, problem=(
                    f"drill {drill.id!r} (line {drill.line}) is not written as a block mapping (`- id: ...` on "
                    f"its own lines); add `kind: {drill.kind.value}` to it by hand"))
            column = found.end("indent") + (found.start("key") - found.end("indent"))
            inserts.append((start + 1, " " * column + f"kind: {drill.kind.value}", drill))
        for at, line, drill in sorted(inserts, key=lambda item: item[0], reverse=True):
            lines.insert(at, line)
        changes += [f"drill {d.id!r}: kind: {d.kind.value} (format 1 inferred it)" for _, _, d in
                    sorted(inserts, key=lambda item: item[0])]
    if target >= 3 and "{{" in text:
        number = text[:text.index("{{")].count("\n") + 1
        return Migration(path, version, version, problem=(
            f"line {number} holds '{{{{', which format 3 reads as a placeholder; migrate to format 2 "
            "(--to 2), or rewrite that text first"))
    new_text = "\n".join(lines)
    new_text, replaced = _VERSION_LINE.subn(lambda m: f"format_version: {target}" + (f" {m.group(2)}" if m.group(2)
                                                                                    else ""), new_text, count=1)
    if not replaced:
        new_text = f"format_version: {target}\n" + new_text
    changes.append(f"format_version: {version} -> {target}")
    migrated, problem = _parse(new_text, str(path))
    if migrated is None:
        return Migration(path, version, version, problem=f"the rewritten file does not validate (nothing written):\n{problem}")
    if _meaning(migrated) != _meaning(module):
        return Migration(path, version, version, problem="the rewritten file would mean something else (nothing "
                                                         "written); migrate it by hand, following lessons/README.md")
    kept = None
    if write:
        if backup:
            kept = path.with_name(f"{path.name}.format{version}")
            kept.write_text(text, encoding="utf-8")
        _replace(path, new_text)
    return Migration(path, version, target, tuple(changes), backup=kept)


def migrate_paths(paths: list[Path], target: int = FORMAT_VERSION, write: bool = True,
                  backup: bool = True) -> list[Migration]:
    """Every module file of each course directory (its *.yaml but course.yaml), or each file named."""
    files: list[Path] = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            files += sorted(p for p in path.glob("*.yaml") if p.name != "course.yaml")
        else:
            files.append(path)
    return [migrate_file(f, target, write, backup) for f in files]


def _parse(text: str, shown: str) -> tuple[Module | None, str]:
    try:
        module, errors = parse_module(load_yaml(text, shown), shown)
    except LessonFileError as exc:
        errors, module = exc.errors, None
    if module is None:
        return None, "\n".join(str(e) for e in errors[:10])
    return module, ""


def _meaning(module: Module):
    def strip(value):
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return tuple((f.name, strip(getattr(value, f.name))) for f in dataclasses.fields(value)
                         if f.name not in _IGNORED)
        if isinstance(value, (list, tuple)):
            return tuple(strip(v) for v in value)
        if isinstance(value, dict):
            return tuple(sorted((k, strip(v)) for k, v in value.items()))
        return value

    return strip(dataclasses.replace(module, format_version=0))


def _replace(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
