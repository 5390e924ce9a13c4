"""A repair's check judges the contract, not one repair: another right fix passes, a wrong fix fails.

Repair drills cannot declare wrong fixes in the lesson format yet (labs declare
`wrong_submissions:`), so the fixes that issue 30 found misjudged are pinned here, run
through the real sandbox and the same tutoring service a learner's edit goes through.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from tutor.commands.drill_proof import check_drill
from tutor.course.loader import load_course
from tutor.locations import builtin_course_dir
from tutor.tutoring.service import TutoringService

pytestmark = pytest.mark.slow

COURSE = load_course(builtin_course_dir())


def drill(module_id: str, drill_id: str):
    module = next(m for m in COURSE.modules() if m.id == module_id)
    return module, next(d for d in module.drills if d.id == drill_id)


STREAM_HEAD = """\
class Records(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
"""
STREAM_TAIL = """
loader = DataLoader(Records(10), batch_size=2, num_workers=2, multiprocessing_context="fork")
seen = [i for batch in loader for i in batch.tolist()]
"""
# contiguous blocks: worker k reads the k-th slice; batch sizes differ from the strided reference's
CONTIGUOUS = STREAM_HEAD + """\
        per = -(-self.n // workers)
        yield from range(worker * per, min(self.n, (worker + 1) * per))
""" + STREAM_TAIL
# worker 0 still reads the whole stream, the others their strided share: some records twice
OVERLAPPING = STREAM_HEAD + """\
        start = 0 if worker == 0 else worker
        yield from range(start, self.n, 1 if worker == 0 else workers)
""" + STREAM_TAIL


def test_stream_workers_accepts_contiguous_shards(shared_sandbox):
    module, stream = drill("14", "stream-workers")
    report = asyncio.run(check_drill(module, dataclasses.replace(stream, solution=CONTIGUOUS), shared_sandbox))
    assert report.ok, "\n".join(report.problems)


def test_stream_workers_rejects_a_fix_that_delivers_records_twice(shared_sandbox):
    _, stream = drill("14", "stream-workers")
    outcome = asyncio.run(TutoringService(None, shared_sandbox).observe(stream, OVERLAPPING))
    obs = outcome.result.observation
    assert obs is not None and obs.check == "failed", outcome.result.message
    assert "arrive more than once" in obs.check_text, obs.check_text
