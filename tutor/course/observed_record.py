"""What ``pytorch-tutor check`` observed for each ask, kept so that ``validate`` can use it.

``validate`` runs no code, so it cannot know a drill's answer; ``check`` does. Each
check run records, per drill, the observed value of every ask as the judge renders
it, together with a fingerprint of what produced it (setup, code and the asks). A
later ``validate`` uses a record only while its fingerprint still matches: editing
a title or a prompt keeps it, editing the code drops it until the next check.

Records live under the tutor's data directory (``$PYTORCH_TUTOR_HOME`` or the
platform's), never beside the lessons: a course directory may be read-only or
shipped inside a wheel.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Mapping

from tutor.course.schema import Drill, Module
from tutor.locations import data_dir

Observed = dict[str, dict[str, str]]  # drill id -> ask key -> observed value as rendered


def fingerprint(drill: Drill) -> str:
    """What an observation depends on: change any of it and the record is stale."""
    parts = [drill.setup, drill.code] + [f"{a.key}\0{a.expr}\0{a.kind}\0{'|'.join(a.options)}" for a in drill.asks]
    return hashlib.sha256("\0\0".join(parts).encode()).hexdigest()[:24]


def record_path(module: Module) -> Path:
    # Keyed by the module's id and file name, not its full path: ``check lessons/03_x.yaml`` and
    # ``validate lessons/`` name one file differently. Two packs that share a name cannot mislead
    # each other: a drill's record is used only while its fingerprint matches.
    name = f"{module.id}\0{Path(module.file).name}"
    return data_dir() / "observed" / f"{hashlib.sha256(name.encode()).hexdigest()[:20]}.json"


def load(module: Module) -> Observed:
    """The recorded observations of ``module`` whose drills are unchanged since they were recorded."""
    try:  # the data directory may not exist or be writable (a read-only home): then there is no record
        data = json.loads(record_path(module).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    out: Observed = {}
    for drill in module.drills:
        entry = data.get(drill.id)
        if not isinstance(entry, dict) or entry.get("fingerprint") != fingerprint(drill):
            continue
        asks = entry.get("asks")
        if isinstance(asks, dict):
            out[drill.id] = {str(k): str(v) for k, v in asks.items() if isinstance(v, str)}
    return out


def save(module: Module, observed: Mapping[str, Mapping[str, str]]) -> None:
    """Merge ``observed`` (drill id -> ask key -> value) into the module's record; best effort."""
    try:
        path = record_path(module)
    except OSError:
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    drills = {d.id: d for d in module.drills}
    for drill_id, asks in observed.items():
        if drill_id in drills:
            data[drill_id] = {"fingerprint": fingerprint(drills[drill_id]), "asks": dict(asks)}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
        os.replace(tmp, path)  # a concurrent validate reads the old record or the new, never half of one
    except OSError:
        pass  # a record is a convenience; check's verdict never depends on it
