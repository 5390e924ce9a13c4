"""Exercise files in the learner's workspace: written once, edited anywhere, reset on request."""

from __future__ import annotations

import time
from pathlib import Path

from tutor.course.schema import Drill, file_stem, is_safe_id
from tutor.locations import inside, workspace_dir

MAX_EXERCISE_BYTES = 256 * 1024


def exercise_path(profile: str, module_id: str, drill: Drill) -> Path:
    """The lab's file in the workspace; ``ValueError`` for ids that could name another place."""
    if not (is_safe_id(module_id) and is_safe_id(drill.id)):
        raise ValueError(f"exercise {module_id[:40]!r}/{drill.id[:40]!r}: not a safe id")
    return inside(workspace_dir(profile), f"{file_stem(module_id)}_{file_stem(drill.id)}.py")


def header(module_id: str, drill: Drill) -> str:
    return (f"# pytorch-tutor exercise {module_id}/{drill.id}: {drill.title}\n"
            "# Edit and save: the tutor re-runs its checks on every save.\n\n")


def ensure_starter(profile: str, module_id: str, drill: Drill) -> Path:
    """The exercise file, created from the starter the first time (never overwritten)."""
    path = exercise_path(profile, module_id, drill)
    if not path.exists():
        path.write_text(header(module_id, drill) + drill.starter, encoding="utf-8")
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
    return kept
