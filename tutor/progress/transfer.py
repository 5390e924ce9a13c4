"""Profile export and import: one versioned JSON file that merges two machines' histories.

Version 3 carries every course the profile holds (each attempt, card and position
names its course) and the lab workspace's files, each under its course
(``courses/<course>/...``, as the workspace keeps them). A version 2 file's workspace
files predate that layout: they are the built-in course's, and go under it. A version 1
file predates course ids: its rows are the built-in course's, as the profile migration says.
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tutor.progress import workspace_files
from tutor.progress.review import ReviewQueue
from tutor.progress.store import BUILTIN_COURSE_ID, KINDS, Attempt, ProfileStore

FORMAT = "pytorch-tutor-profile"
VERSION = 3
# What an import accepts, checked on the whole file before anything is written (then one transaction).
# The budget: 100,000 attempts import in under 10 s (benchmarks/bench_profile_import.py measures it).
MAX_IMPORT_BYTES = 64 << 20
MAX_ATTEMPTS = 1_000_000
MAX_CARDS = 100_000
MAX_POSITIONS = 10_000
MAX_NAME = 4096  # a module, item, kind or time; a card's JSON
MAX_DEPTH = 16  # nesting of an attempt's answers, observation or verdict, and of a card


def plain_data_problem(value: object, what: str) -> None:
    """``ValueError`` unless ``value`` is JSON data nested at most ``MAX_DEPTH`` deep with finite numbers.

    Walked with a list, not recursion: a hostile file's depth never reaches Python's stack.
    """
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"'{what}' is nested more than {MAX_DEPTH} deep")
        if isinstance(item, dict):
            if not all(isinstance(k, str) for k in item):
                raise ValueError(f"'{what}' has a key that is not text")
            pending.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            pending.extend((v, depth + 1) for v in item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"'{what}' holds a number that is not finite ({item})")
        elif not (item is None or isinstance(item, (str, int, float))):
            raise ValueError(f"'{what}' holds a {type(item).__name__}, not JSON data")


@dataclass
class ExportReport:
    attempts: int
    courses: int
    files: int
    skipped: list[str] = field(default_factory=list)  # workspace files left out, with why


@dataclass
class ImportReport:
    added: int
    present: int
    files: int = 0
    kept: list[str] = field(default_factory=list)  # local workspace files moved aside for an imported one


def export_profile(store: ProfileStore, path: Path, workspace: Path | None = None,
                   learner: str = "") -> ExportReport:
    """Write every course's attempts, cards and position, and the workspace's files, to ``path``; ``learner``:
    the name class-report gives the file (optional: 30 files all called me.json otherwise collide)."""
    current = store.course
    attempts, cards, positions = [], [], []
    courses = store.courses()
    try:
        for course in courses:
            store.use_course(course)
            attempts += [asdict(a) for a in store.attempts()]
            cards += [{"course": course, "module": m, "item": i, "kind": k, "card": c} for m, i, k, c in store.cards()]
            if (position := store.position()) is not None:
                positions.append({"course": course, "module": position[0], "item": position[1],
                                  "at": store.position_at()})
    finally:
        store.use_course(current)
    files, skipped = workspace_files.collect(workspace) if workspace is not None else ([], [])
    data = {"format": FORMAT, "version": VERSION, "attempts": attempts, "cards": cards, "positions": positions,
            "workspace": files}
    if learner:
        data["learner"] = learner
    tmp = Path(path).with_name(Path(path).name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    tmp.replace(path)
    return ExportReport(len(attempts), len(courses), len(files), skipped)


def _key(a: Attempt) -> tuple:
    return (a.at, a.module, a.item, a.kind, json.dumps(a.answers, sort_keys=True), bool(a.correct))


def import_profile(store: ProfileStore, path: Path, workspace: Path | None = None) -> ImportReport:
    """Merge ``path`` into ``store`` (and its files into ``workspace``).

    Raises ``ValueError`` with a message naming the problem; nothing is written then.
    """
    data = _read(Path(path))
    incoming = _attempts(data)
    raw_cards = data.get("cards") or []
    if not isinstance(raw_cards, list) or len(raw_cards) > MAX_CARDS:
        raise ValueError(f"'cards' is not a list of at most {MAX_CARDS} cards")
    cards = [_card(raw, i) for i, raw in enumerate(raw_cards)]
    positions = data.get("positions") or []
    if data["version"] == 1 and isinstance(data.get("position"), dict):
        positions = [data["position"]]
    positions = [p for p in positions if isinstance(p, dict)
                 and all(isinstance(p.get(k), str) for k in ("module", "item", "at"))]
    files = workspace_files.validate(data.get("workspace")) if workspace is not None else []
    if data["version"] < 3:  # lab files from before they were kept per course: the built-in course's
        files = [(workspace_files.legacy_path(relative), text) for relative, text in files]
        if (deep := next((r for r, _ in files if workspace_files.path_problem(r)), None)) is not None:
            raise ValueError(f"workspace file {deep[:80]!r}: {workspace_files.path_problem(deep)}")
    elif (stray := next((r for r, _ in files if not workspace_files.is_per_course(r)), None)) is not None:
        raise ValueError(f"workspace file {stray[:80]!r} is not under a course (courses/<course>/...)")

    if len(positions) > MAX_POSITIONS:
        raise ValueError(f"{len(positions)} positions: more than {MAX_POSITIONS} is not a profile export")
    for position in positions:
        _course_of(position)
        if any(len(position[k]) > MAX_NAME for k in ("module", "item", "at")):
            raise ValueError("a position names a module, an item or a time longer than a profile's")

    current = store.course
    added = 0
    staged = workspace_files.stage(workspace, files) if workspace is not None else workspace_files.Staged()
    try:
        with store.transaction():  # the whole file, or (on any error) nothing of it
            by_course: dict[str, list[Attempt]] = {}
            for attempt in incoming:
                by_course.setdefault(attempt.course, []).append(attempt)
            for course, attempts in by_course.items():
                store.use_course(course)
                existing = {_key(a) for a in store.attempts()}
                new = []
                for attempt in sorted(attempts, key=lambda a: a.at):
                    if _key(attempt) not in existing:
                        new.append(attempt)
                        existing.add(_key(attempt))
                store.record_many(new)
                added += len(new)
            for course, module, item, kind, raw_card in cards:
                store.use_course(course)
                ReviewQueue(store).merge_card(module, item, kind, raw_card)
            for position in positions:
                store.use_course(_course_of(position))
                if position["at"] > store.position_at():
                    store.set_position_at(position["module"], position["item"], position["at"])
    except sqlite3.Error as exc:  # validated above: a full disk, a locked profile
        staged.discard()
        raise ValueError(f"the profile could not be written, nothing of {Path(path).name} was imported: "
                         f"{exc}") from None
    except BaseException:
        staged.discard()
        raise
    finally:
        store.use_course(current)
    written, kept = staged.publish()  # renames only; it puts back what it moved if one fails
    return ImportReport(added, len(incoming) - added, written, kept)


def _course_of(raw: dict) -> str:
    """A row's course; rows from before course ids (format 1) are the built-in course's."""
    course = raw.get("course")
    if course is None:
        return BUILTIN_COURSE_ID
    if not isinstance(course, str) or not course.strip() or len(course) > 4096:
        raise ValueError("a row names a course that is not text")
    return course


def export_learner(path: Path) -> str:
    """The learner's name an export carries ("" when none: an export made without --name, or an older one).
    Read as data and made a single printable line by its caller; never trusted as anything else."""
    try:
        name = _read(Path(path)).get("learner", "")
    except ValueError:
        return ""
    return name if isinstance(name, str) else ""


def read_export(path: Path) -> list[Attempt]:
    """The attempts of an export file, validated; ``ValueError`` naming the file and the problem."""
    path = Path(path)
    try:
        return _attempts(_read(path))
    except ValueError as exc:
        message = str(exc)
        raise ValueError(message if message.startswith(str(path)) else f"{path}: {message}") from None


def _read(path: Path) -> dict:
    try:
        if path.stat().st_size > MAX_IMPORT_BYTES:
            raise ValueError(f"{path} is larger than {MAX_IMPORT_BYTES >> 20} MiB")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{path} is not a profile export: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path} is not a pytorch-tutor profile export")
    if not isinstance(data.get("version"), int) or data["version"] > VERSION:
        raise ValueError(f"{path} was exported by a newer pytorch-tutor (format {data.get('version')}); update first")
    return data


def _attempts(data: dict) -> list[Attempt]:
    raw = data.get("attempts") or []
    if not isinstance(raw, list):
        raise ValueError("'attempts' is not a list")
    if len(raw) > MAX_ATTEMPTS:
        raise ValueError(f"{len(raw)} attempts: more than {MAX_ATTEMPTS} is not a profile export")
    return [read_attempt(item, i) for i, item in enumerate(raw)]


def read_attempt(raw: object, index: int) -> Attempt:
    """One attempt from plain data (an export's, or a profile's row), validated; ``ValueError`` says what is wrong."""
    where = f"attempt {index}"
    if not isinstance(raw, dict):
        raise ValueError(f"{where} is not an object")
    try:
        names = {k: raw[k] for k in ("module", "item", "kind", "at")}
        for key, value in names.items():
            if not isinstance(value, str) or len(value) > MAX_NAME:
                raise ValueError(f"'{key}' is not text of at most {MAX_NAME} characters")
        seconds = raw.get("seconds") or 0.0
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < math.inf:
            raise ValueError("'seconds' is not a finite, non-negative number of seconds")
        fields = {k: raw.get(k) or {} for k in ("answers", "observed", "verdict")}
        for key, value in fields.items():
            if not isinstance(value, dict):
                raise ValueError(f"'{key}' is not an object")
            plain_data_problem(value, key)
        attempt = Attempt(
            module=names["module"], item=names["item"], kind=names["kind"], correct=bool(raw["correct"]),
            answers=fields["answers"], observed=fields["observed"], verdict=fields["verdict"],
            seconds=float(seconds), at=names["at"],
            confidence=raw.get("confidence") if raw.get("confidence") in (1, 2, 3) else None,
            course=_course_of(raw),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{where} is malformed: {str(exc)[:200]}") from None
    if attempt.kind not in KINDS:
        raise ValueError(f"{where} has an unknown kind {attempt.kind!r}")
    return attempt


def _card(raw: object, index: int) -> tuple[str, str, str, str, str]:
    from fsrs import Card

    if not isinstance(raw, dict) or not all(isinstance(raw.get(k), str) for k in ("module", "item", "kind", "card")):
        raise ValueError(f"card {index} is malformed")
    if any(len(raw[k]) > MAX_NAME for k in ("module", "item", "kind", "card")):
        raise ValueError(f"card {index} is longer than a review card")
    try:
        plain_data_problem(json.loads(raw["card"]), "card")  # before fsrs reads it: depth and numbers
        Card.from_json(raw["card"])
    except RecursionError:
        raise ValueError(f"card {index} cannot be read: nested too deeply") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"card {index} cannot be read: {str(exc)[:200]}") from None
    return _course_of(raw), raw["module"], raw["item"], raw["kind"], raw["card"]
