"""Exercise files in the learner's workspace: written once, edited anywhere, reset on request.

A profile's workspace keeps each course's lab files apart, keyed by the course's identity
(the one its progress is kept under, profile schema 4)::

    workspace/<profile>/courses/<course>/07_micrograd.py

so two courses with a lab of the same module and id never share a file. A workspace from
before that (lab files directly under ``workspace/<profile>/``) is moved, the first time
it is used, under the built-in course, whose progress the schema-4 migration took over too;
nothing is overwritten (a clash keeps both).
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from tutor.course.schema import Drill, Stage, file_stem, is_safe_id
from tutor.locations import inside, workspace_dir
from tutor.progress.workspace_files import COURSES, imported_marker
from tutor.progress.store import BUILTIN_COURSE_ID as LEGACY_COURSE  # whose progress the schema-4 migration kept

MAX_EXERCISE_BYTES = 256 * 1024


@dataclass(frozen=True)
class Workspace:
    """One learner's lab files for one course: ``Workspace(profile name, course identity)``."""

    profile: str
    course: str

    @property
    def directory(self) -> Path:
        root = profile_workspace(self.profile)
        courses = root / COURSES
        courses.mkdir(exist_ok=True)
        path = inside(courses, course_key(self.course))
        path.mkdir(exist_ok=True)
        return path


def course_key(identity: str) -> str:
    """A course's directory name: its id when that is a safe name, else a hash of its identity."""
    if is_safe_id(identity) and identity != COURSES:
        return identity
    return "dir-" + hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def profile_workspace(profile: str) -> Path:
    """The profile's workspace root, its pre-per-course files moved under the built-in course first."""
    root = workspace_dir(profile)
    legacy = [entry for entry in root.iterdir() if entry.name != COURSES]
    if legacy:
        _move_under_builtin(root, legacy)
    return root


def _move_under_builtin(root: Path, entries: list[Path]) -> None:
    target = root / COURSES / course_key(LEGACY_COURSE)
    target.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for entry in entries:
        destination = target / entry.name
        if destination.exists() or destination.is_symlink():  # never overwrite: keep both
            destination = target / f"{Path(entry.name).stem}.before-per-course-{stamp}{Path(entry.name).suffix}"
        try:
            os.rename(entry, destination)
        except FileNotFoundError:  # another tutor process moved it first
            continue


def exercise_path(space: Workspace, module_id: str, drill: Drill) -> Path:
    """The lab's file in the workspace; ``ValueError`` for ids that could name another place."""
    return _lab_path(space, module_id, drill.id)


def _lab_path(space: Workspace, module_id: str, drill_id: str, suffix: str = ".py") -> Path:
    if not (is_safe_id(module_id) and is_safe_id(drill_id)):
        raise ValueError(f"lab {module_id[:40]!r}/{drill_id[:40]!r}: not a safe id")
    return inside(space.directory, f"{file_stem(module_id)}_{file_stem(drill_id)}{suffix}")


def other_file_path(space: Workspace, module_id: str, drill: Drill, name: str) -> Path:
    """A multi-file lab's other file: ``<lab>/<name>.py`` beside the lab's main file."""
    folder = _lab_path(space, module_id, drill.id, suffix="")
    return inside(folder, f"{name.replace('.', '_')}.py")


def _reference_marker(space: Workspace, module_id: str, drill_id: str) -> Path:
    return _lab_path(space, module_id, drill_id, suffix=".use-reference")


def use_reference(space: Workspace, module_id: str, drill_id: str, on: bool = True) -> None:
    """Switch an earlier stage of chained labs to its reference (``on``) or back to the learner's file."""
    marker = _reference_marker(space, module_id, drill_id)
    if on:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("later labs import this stage's reference solution\n", encoding="utf-8")
    else:
        marker.unlink(missing_ok=True)


def uses_reference(space: Workspace, module_id: str, drill_id: str) -> bool:
    return _reference_marker(space, module_id, drill_id).exists()


def lab_files(space: Workspace, module_id: str, drill: Drill) -> tuple[dict[str, str], list[str]]:
    """A lab's other files and earlier stages, by module name, as the learner has them; and notes.

    A stage the learner switched to the reference (or never started) is left out, so the
    run uses that stage's reference; each note says whose code a stage is.
    """
    files: dict[str, str] = {}
    notes: list[str] = []
    for f in drill.files:
        path = other_file_path(space, module_id, drill, f.name)
        if path.exists():
            files[f.name] = read_exercise(path)
    for stage in drill.stages:
        text, note = stage_file(space, stage)
        if text is not None:
            files[stage.name] = text
        notes.append(note)
    return files, notes


def stage_file(space: Workspace, stage: Stage) -> tuple[str | None, str]:
    """An earlier stage as the learner has it: (their file's text, or None for the stage's reference; a note).

    The one decision "the learner's file or the reference" of chained labs and of the
    capstone's ``--package mine``: a stage the learner switched to its reference, or has not
    started yet, is the reference; otherwise it is their file as it is now.
    """
    whose = stage_whose(space, stage)
    if whose != YOURS:
        return None, f"{stage.name}: the reference for {stage.module_id}/{stage.drill_id} ({whose})"
    path = _lab_path(space, stage.module_id, stage.drill_id)
    return read_exercise(path), f"{stage.name}: your {path.name}"


YOURS, SWITCHED, NOT_STARTED = "yours", "you switched to it", "not started yet"
NOT_OPENED = "imported, and its lab not opened since"


def stage_whose(space: Workspace, stage: Stage) -> str:
    """YOURS, SWITCHED (to the reference), NOT_STARTED or NOT_OPENED: whose code an earlier stage runs.

    A file a profile import wrote is someone else's code until the learner opens its lab
    (``ensure_starter`` clears the mark): until then the stage is the reference, so that a shared
    progress file never plants code that ``--package mine`` or a chained lab runs."""
    if uses_reference(space, stage.module_id, stage.drill_id):
        return SWITCHED
    path = _lab_path(space, stage.module_id, stage.drill_id)
    if not path.exists():
        return NOT_STARTED
    return NOT_OPENED if imported_marker(path).exists() else YOURS


def header(module_id: str, drill: Drill) -> str:
    return (f"# pytorch-tutor lab {module_id}/{drill.id}: {drill.title}\n"
            "# Edit and save: the tutor re-runs its checks on every save.\n\n")


def ensure_starter(space: Workspace, module_id: str, drill: Drill) -> Path:
    """The exercise file, created from the starter the first time (never overwritten). The learner
    opens the lab with it: a file a profile import brought is theirs from now on."""
    path = exercise_path(space, module_id, drill)
    if not path.exists():
        path.write_text(header(module_id, drill) + drill.starter, encoding="utf-8")
    imported_marker(path).unlink(missing_ok=True)
    for f in drill.files:
        other = other_file_path(space, module_id, drill, f.name)
        if not other.exists():
            other.parent.mkdir(parents=True, exist_ok=True)
            other.write_text(f.starter, encoding="utf-8")
    return path


def read_exercise(path: Path) -> str:
    """The learner's code; raises ``ValueError`` with a message when it cannot be used."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{path} is gone; reset the lab to write the starter again") from None
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    if len(raw) > MAX_EXERCISE_BYTES:
        raise ValueError(f"{path} is larger than {MAX_EXERCISE_BYTES // 1024} KiB")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text") from None


def reset_exercise(space: Workspace, module_id: str, drill: Drill) -> Path | None:
    """Restore the starter; the learner's version is kept beside it. Returns where it was kept."""
    path = exercise_path(space, module_id, drill)
    kept = None
    if path.exists():
        kept = path.with_name(f"{path.stem}.before-reset-{time.strftime('%Y%m%d-%H%M%S')}.py")
        path.rename(kept)
    path.write_text(header(module_id, drill) + drill.starter, encoding="utf-8")
    imported_marker(path).unlink(missing_ok=True)
    stamp = time.strftime('%Y%m%d-%H%M%S')
    for f in drill.files:  # a multi-file lab's other files go back to their starters too, kept the same way
        other = other_file_path(space, module_id, drill, f.name)
        if other.exists():
            other.rename(other.with_name(f"{other.stem}.before-reset-{stamp}.py"))
        other.parent.mkdir(parents=True, exist_ok=True)
        other.write_text(f.starter, encoding="utf-8")
    return kept
