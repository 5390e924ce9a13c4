"""The course graph: the seed's dependency rules and how modules open."""

from __future__ import annotations

from tutor.course.graph import Status, find_cycle, module_states
from tutor.course.loader import load_course
from tutor.locations import builtin_course_dir


def test_find_cycle():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": []}) is None
    cycle = find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]})
    assert cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    assert find_cycle({"a": ["a"]}) == ["a", "a"]


def test_builtin_course_follows_the_seed_graph():
    course = load_course(builtin_course_dir())
    assert not course.errors, course.errors
    requires = {s.id: set(s.requires) for s in course.slots}
    assert [s.id for s in course.slots] == [f"{n:02d}" for n in range(1, 39)]
    for n in range(2, 20):  # the spine
        assert requires[f"{n:02d}"] == {f"{n - 1:02d}"}
    assert requires["20"] == {"19"} and requires["26"] == {"19"} and requires["30"] == {"19"}
    for n in range(21, 26):  # the compiler path
        assert requires[f"{n:02d}"] == {f"{n - 1:02d}"}
    assert requires["27"] == {"26"}
    # the compiler and distributed paths do not depend on each other
    def ancestors(m, seen=None):
        seen = set() if seen is None else seen
        for r in requires[m]:
            if r not in seen:
                seen.add(r)
                ancestors(r, seen)
        return seen
    assert not ancestors("25") & {"26", "27"} and not ancestors("27") & {f"{n}" for n in range(20, 26)}
    for n in range(31, 39):
        assert f"{n - 1:02d}" in requires[f"{n:02d}"]
    assert {"23", "27"} <= requires["37"] and {"28", "29"} <= requires["38"]
    assert find_cycle({k: list(v) for k, v in requires.items()}) is None


def test_states_lock_with_a_reason_and_open_when_done(mini_course):
    states = module_states(mini_course, done=set(), started=set())
    assert states["01"].status == Status.OPEN
    assert states["02"].status == Status.LOCKED and states["02"].reason == "needs 01"
    assert states["03"].status == Status.COMING
    # 04 requires the unwritten 03, which stands for its own requirement: 02
    assert states["04"].status == Status.LOCKED and states["04"].reason == "needs 02"

    states = module_states(mini_course, done={"01"}, started={"02"})
    assert states["01"].status == Status.DONE
    assert states["02"].status == Status.IN_PROGRESS
    states = module_states(mini_course, done={"01", "02"}, started=set())
    assert states["04"].status == Status.OPEN
