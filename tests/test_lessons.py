"""Every claim in the built-in course, executed: `pytorch-tutor check` over lessons/, one test per drill.

Each drill is its own test (``tests/test_lessons.py::test_drill_passes_check[03/view-of-transpose]``), so
a failing drill names itself and ``-k`` picks drills or modules. The runs themselves happen once, in
parallel as ``pytorch-tutor check`` runs them (one worker per core, on the session's sandbox), for the
drills this session selected; each test then reads its own drill's report.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from tutor.authoring import check_drill
from tutor.course.loader import load_course
from tutor.locations import builtin_course_dir

COURSE = load_course(builtin_course_dir())
DRILLS = {f"{m.id}/{d.id}": (m, d) for m in COURSE.modules() for d in m.drills}
TEST_NAME = "test_drill_passes_check"


@pytest.fixture(scope="session")
def check_reports(request, shared_sandbox) -> dict:
    wanted = [item.callspec.params["drill"] for item in request.session.items
              if getattr(item, "originalname", "") == TEST_NAME and item.callspec.params.get("drill") in DRILLS]
    gate = asyncio.Semaphore(max(1, os.cpu_count() or 1))

    async def one(ref: str):
        async with gate:
            return ref, await check_drill(*DRILLS[ref], shared_sandbox)

    async def every():
        return dict(await asyncio.gather(*(one(ref) for ref in wanted)))

    return asyncio.run(every())


@pytest.mark.slow
@pytest.mark.parametrize("drill", list(DRILLS))
def test_drill_passes_check(drill, check_reports):
    report = check_reports[drill]
    assert report.ok, f"{drill} ({report.kind}):\n" + "\n".join(report.problems)


def test_the_course_loads_without_errors():
    assert COURSE.all_errors() == []
    assert len(COURSE.modules()) == len(COURSE.slots)


def test_builtin_modules_meet_the_content_bar():
    for module in COURSE.modules():
        assert len(module.drills) >= 8, module.id
        assert len(module.self_checks) >= 4, module.id
        for drill in module.drills:
            assert drill.hints and drill.explanation.strip(), drill.id
            # a prediction needs a plausible wrong answer; an exercise's starter plays that part
            assert drill.wrong_answers or (drill.is_exercise and drill.starter.strip()), drill.id
