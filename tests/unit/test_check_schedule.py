"""`check` spreads its work over its workers: each instance of a variant drill is a unit of its own,
and the costliest kinds (C++ builds, labs, process drills, repairs) queue ahead of predictions, so a
check does not end on one worker finishing a lab alone. Reports still come back in course order.
Through the real check on the variants fixture course; the sandbox is a fake that computes what the
drill's code would (tests/unit/test_variant_instances.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import io

from tests.unit.test_variant_instances import COURSE, SumSandbox
from tutor.commands.authoring import check_jobs
from tutor.commands.drill_proof import check_drill, expected_cost
from tutor.course.loader import load_course


def course():
    loaded = load_course(COURSE)
    assert not loaded.all_errors(), loaded.all_errors()
    return {m.id: m for m in loaded.modules()}


class MeetingSandbox(SumSandbox):
    """Holds every run until two runs are in flight at once (event-driven: no clock decides it)."""

    def __init__(self) -> None:
        super().__init__()
        self.active = 0
        self.most = 0
        self.met = asyncio.Event()

    async def run(self, request):
        self.active += 1
        self.most = max(self.most, self.active)
        if self.active >= 2:
            self.met.set()
        try:  # the guard only turns a would-be hang into a failure: runs one at a time never meet
            await asyncio.wait_for(self.met.wait(), timeout=60)
            return await super().run(request)
        finally:
            self.active -= 1


def test_a_variant_drills_instances_run_side_by_side_on_two_workers(monkeypatch):
    monkeypatch.setenv("PYTORCH_TUTOR_VARIANT_SAMPLE", "4")  # instances enough that their answers differ
    module = course()["01"]
    drill = module.drill("sum-count")
    sandbox = MeetingSandbox()

    async def go():
        return await check_drill(module, drill, sandbox, asyncio.Semaphore(2))

    report = asyncio.run(go())
    assert report.ok, report.problems
    assert sandbox.most == 2  # never more than the gate's two workers
    assert len(sandbox.requests) >= 3  # every instance ran (corners and the sample)


def test_costly_kinds_queue_first_and_reports_keep_the_jobs_order(monkeypatch):
    monkeypatch.setenv("PYTORCH_TUTOR_VARIANT_SAMPLE", "4")
    modules = course()
    plain, summed = modules["01"].drill("plain"), modules["01"].drill("sum-count")
    built = dataclasses.replace(modules["02"].drill("after"), needs=("exec",))  # a C++ build's cost class
    assert expected_cost(built) > expected_cost(summed) == expected_cost(plain)
    jobs = [(modules["01"], plain), (modules["01"], summed), (modules["02"], built)]
    sandbox = SumSandbox()
    out = io.StringIO()
    reports = asyncio.run(check_jobs(jobs, 1, out, sandbox))
    assert [r.drill for r in reports] == ["plain", "sum-count", "after"]
    assert all(r.ok for r in reports), [r.problems for r in reports]
    assert sandbox.requests[0].code.startswith("v = ")  # the last job in course order ran first
    assert "ones(3).sum()" in sandbox.requests[1].code  # then the rest in course order


def test_instances_that_agree_make_check_draw_more_before_it_refuses_the_variant(monkeypatch):
    """Whether a variant moves the answer is the drill's property, not a small sample's: the fixture's first two
    sampled instances of `sum-count` (seed 29) observe the same count, so check draws further ones, each proved,
    until one differs (a pack that passed with a wider sample keeps passing)."""
    monkeypatch.setenv("PYTORCH_TUTOR_VARIANT_SAMPLE", "2")
    module = course()["01"]
    drill = module.drill("sum-count")
    sandbox = SumSandbox()
    report = asyncio.run(check_drill(module, drill, sandbox))
    assert report.ok, report.problems
    corners = len(drill.variants.corners)
    assert len(sandbox.requests) > corners + 2  # it went past the sample
