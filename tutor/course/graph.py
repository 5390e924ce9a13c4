"""The course's dependency graph: cycles, and which modules a learner may open."""

from __future__ import annotations

import graphlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Mapping, Sequence


def find_cycle(requires: Mapping[str, Sequence[str]]) -> list[str] | None:
    """Return one cycle as ``[a, b, …, a]`` (a requires b …) if the graph has any, else ``None``."""
    known = {node: [dep for dep in deps if dep in requires] for node, deps in requires.items()}  # unknown ids: reported apart
    try:
        graphlib.TopologicalSorter(known).prepare()
    except graphlib.CycleError as exc:
        # graphlib lists each node before the one that depends on it; read it the way `requires` points
        return list(reversed(exc.args[1]))
    return None


class Status(StrEnum):
    LOCKED = "locked"
    OPEN = "open"
    IN_PROGRESS = "in progress"
    DONE = "done"
    TESTED_OUT = "tested out"  # skipped by passing a placement: opens what needs it, yet not done
    COMING = "coming"
    BROKEN = "broken"


@dataclass(frozen=True)
class ModuleState:
    status: Status
    reason: str = ""  # why it is locked or broken, in words a learner reads


def effective_requires(course, module_id: str) -> list[str]:
    """The written modules ``module_id`` needs directly, in course order: an unwritten ("coming")
    module stands for its own requirements."""
    slots = {s.id: s for s in course.slots}

    def walk(module_id: str, seen: set[str]) -> list[str]:
        out: list[str] = []
        for req in slots[module_id].requires:
            if req not in slots or req in seen:
                continue
            seen.add(req)
            out.extend(walk(req, seen) if slots[req].is_coming else [req])
        return out

    return list(dict.fromkeys(walk(module_id, set())))


def honest_tested_out(course, done: set[str], tested_out: set[str]) -> set[str]:
    """The tested-out modules whose prerequisites are each done or (so counted) tested out.

    A placement marks a module only then; this keeps a profile written before that rule (or
    edited by hand) from opening a module behind one the learner neither finished nor tested out of.
    """
    counted: set[str] = set()
    changed = True
    while changed:  # a fixpoint, whatever order course.yaml lists the modules in
        changed = False
        for slot in course.slots:
            if (slot.id in tested_out and slot.id not in counted and slot.id not in done
                    and all(r in done or r in counted for r in effective_requires(course, slot.id))):
                counted.add(slot.id)
                changed = True
    return counted


def module_states(course, done: set[str], started: set[str],
                  tested_out: set[str] = frozenset()) -> dict[str, ModuleState]:
    """Each module's state given the ids the learner has finished, started and tested out of.

    A tested-out module satisfies what requires it, like a done one, and shows as such; one
    whose own prerequisites are neither done nor tested out counts as not tested out.

    A module opens when every module it requires is done. A "coming" module
    (no lesson file yet) is transparent: it stands for its own requirements,
    so an unwritten module neither locks the rest of the course forever nor
    lets a learner skip the written modules before it.
    """
    tested_out = honest_tested_out(course, done, tested_out)
    states: dict[str, ModuleState] = {}
    for slot in course.slots:
        if slot.is_coming:
            states[slot.id] = ModuleState(Status.COMING, "lesson not written yet")
            continue
        if slot.is_broken:
            states[slot.id] = ModuleState(Status.BROKEN, str(slot.errors[0]))
            continue
        # in the order course.yaml lists them, as the map's "Requires:" does
        missing = [r for r in effective_requires(course, slot.id) if r not in done and r not in tested_out]
        if slot.id in done:
            states[slot.id] = ModuleState(Status.DONE)
        elif slot.id in tested_out:
            states[slot.id] = ModuleState(Status.TESTED_OUT, "skipped by a placement")
        elif missing:
            states[slot.id] = ModuleState(Status.LOCKED, "needs " + ", ".join(missing))
        elif slot.id in started:
            states[slot.id] = ModuleState(Status.IN_PROGRESS)
        else:
            states[slot.id] = ModuleState(Status.OPEN)
    return states
