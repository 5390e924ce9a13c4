"""Exercise files in the learner's workspace: written once, edited anywhere, reset on request."""

from __future__ import annotations

import time
from pathlib import Path

from tutor.course.schema import Drill, file_stem, is_safe_id
from tutor.locations import inside, workspace_dir

MAX_EXERCISE_BYTES = 256 * 1024


def exercise_path(profile: str, module_id: str, drill: Drill) -> Path:
    """The lab's file in the workspace; ``ValueError`` for ids that could name another place."""
    return _lab_path(profile, module_id, drill.id)


def _lab_path(profile: str, module_id: str, drill_id: str, suffix: str = ".py") -> Path:
    if not (is_safe_id(module_id) and is_safe_id(drill_id)):
        raise ValueError(f"exercise {module_id[:40]!r}/{drill_id[:40]!r}: not a safe id")
    return inside(workspace_dir(profile), f"{file_stem(module_id)}_{file_stem(drill_id)}{suffix}")


def other_file_path(profile: str, module_id: str, drill: Drill, name: str) -> Path:
    """A multi-file lab's other file: ``<lab>/<name>.py`` beside the lab's main file."""
    folder = _lab_path(profile, module_id, drill.id, suffix="")
    return inside(folder, f"{name.replace('.', '_')}.py")


def _reference_marker(profile: str, module_id: str, drill_id: str) -> Path:
    return _lab_path(profile, module_id, drill_id, suffix=".use-reference")


def use_reference(profile: str, module_id: str, drill_id: str, on: bool = True) -> None:
    """Switch an earlier stage of chained labs to its reference (``on``) or back to the learner's file."""
    marker = _reference_marker(profile, module_id, drill_id)
    if on:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("later labs import this stage's reference solution\n", encoding="utf-8")
    else:
        marker.unlink(missing_ok=True)


def uses_reference(profile: str, module_id: str, drill_id: str) -> bool:
    return _reference_marker(profile, module_id, drill_id).exists()


def lab_files(profile: str, module_id: str, drill: Drill) -> tuple[dict[str, str], list[str]]:
    """A lab's other files and earlier stages, by module name, as the learner has them; and notes.

    A stage the learner switched to the reference (or never started) is left out, so the
    run uses that stage's reference; each note says whose code a stage is.
    """
    files: dict[str, str] = {}
    notes: list[str] = []
    for f in drill.files:
        path = other_file_path(profile, module_id, drill, f.name)
        if path.exists():
            files[f.name] = read_exercise(path)
    for stage in drill.stages:
        path = _lab_path(profile, stage.module_id, stage.drill_id)
        if uses_reference(profile, stage.module_id, stage.drill_id):
            notes.append(f"{stage.name}: the reference for {stage.module_id}/{stage.drill_id} (you switched to it)")
        elif not path.exists():
            notes.append(f"{stage.name}: the reference for {stage.module_id}/{stage.drill_id} (not started yet)")
        else:
            files[stage.name] = read_exercise(path)
            notes.append(f"{stage.name}: your {path.name}")
    return files, notes


def header(module_id: str, drill: Drill) -> str:
    return (f"# pytorch-tutor exercise {module_id}/{drill.id}: {drill.title}\n"
            "# Edit and save: the tutor re-runs its checks on every save.\n\n")


def ensure_starter(profile: str, module_id: str, drill: Drill) -> Path:
    """The exercise file, created from the starter the first time (never overwritten)."""
    path = exercise_path(profile, module_id, drill)
    if not path.exists():
        path.write_text(header(module_id, drill) + drill.starter, encoding="utf-8")
    for f in drill.files:
        other = other_file_path(profile, module_id, drill, f.name)
        if not other.exists():
            other.parent.mkdir(parents=True, exist_ok=True)
            other.write_text(f.starter, encoding="utf-8")
    return path


def read_exercise(path: Path) -> str:
    """The learner's code; raises ``ValueError`` with a message when it cannot be used."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{path} is gone; reset the exercise to write the starter again") from None
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    if len(raw) > MAX_EXERCISE_BYTES:
        raise ValueError(f"{path} is larger than {MAX_EXERCISE_BYTES // 1024} KiB")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text") from None


def reset_exercise(profile: str, module_id: str, drill: Drill) -> Path | None:
    """Restore the starter; the learner's version is kept beside it. Returns where it was kept."""
    path = exercise_path(profile, module_id, drill)
    kept = None
    if path.exists():
        kept = path.with_name(f"{path.stem}.before-reset-{time.strftime('%Y%m%d-%H%M%S')}.py")
        path.rename(kept)
    path.write_text(header(module_id, drill) + drill.starter, encoding="utf-8")
    stamp = time.strftime('%Y%m%d-%H%M%S')
    for f in drill.files:  # a multi-file lab's other files go back to their starters too, kept the same way
        other = other_file_path(profile, module_id, drill, f.name)
        if other.exists():
            other.rename(other.with_name(f"{other.stem}.before-reset-{stamp}.py"))
        other.parent.mkdir(parents=True, exist_ok=True)
        other.write_text(f.starter, encoding="utf-8")
    return kept
