"""Benchmark: how long interview mode makes a learner wait (issue 35).

Goal: the next question appears within 0.3 s of the last answer on two idle cores, the sandbox warm.
Measured over the built-in course, a fresh profile, the whole course as scope (the largest pool), in one run:

(a) starting an interview: the pool over every module and the staircase (once);
(b) choosing the next question (``Interview.next_question``: the staircase, a fresh instance of a drill
    that varies, the profile read for the instances the learner has seen) and recording an answer
    (``session.record`` of an interview attempt, as after every answer) — what stands between an
    answer and the next question on screen;
(c) the sandbox run that judges a prediction or triage question (``service.observe`` of the drill,
    the run ``answer_prediction`` makes), the zygote warm.

    .venv/bin/python benchmarks/bench_interview.py [--questions 40] [--runs 12]

No budget: it reports, it does not pass or fail.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.course import grants  # noqa: E402
from tutor.course.loader import load_course  # noqa: E402
from tutor.interview.plan import QuestionKind, Scope  # noqa: E402
from tutor.interview.run import Interview  # noqa: E402
from tutor.locations import builtin_course_dir  # noqa: E402
from tutor.progress.store import ATTEMPT_NOTE, Attempt, AttemptKind, ProfileStore  # noqa: E402
from tutor.sandbox.client import Sandbox  # noqa: E402
from tutor.session import Session  # noqa: E402
from tutor.tutoring.service import TutoringService  # noqa: E402


def line(name: str, seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return (f"{name:<52} n={len(ordered):>3}  median {statistics.median(ordered) * 1000:7.1f} ms  "
            f"p90 {p90 * 1000:7.1f} ms  max {ordered[-1] * 1000:7.1f} ms")


async def main(questions: int, runs: int) -> None:
    course = load_course(builtin_course_dir())
    with tempfile.TemporaryDirectory() as home:
        store = ProfileStore.open(Path(home) / "bench.sqlite")
        session = Session(course, store)
        sandbox = Sandbox(**grants.sandbox_options(course.root, course.modules()))
        service = TutoringService(session, sandbox)
        scope = Scope("all", "the whole course", tuple(m.id for m in course.modules()))
        try:
            began = time.perf_counter()
            interview = Interview(service, scope, 45, seed=1)
            start = time.perf_counter() - began
            picks, records, judged = [], [], []
            await service.start()  # warm: the learner reads the first question while it starts
            for number in range(questions):
                began = time.perf_counter()
                question = interview.next_question()
                picks.append(time.perf_counter() - began)
                if question is None:
                    break
                if question.kind in (QuestionKind.PREDICT, QuestionKind.TRIAGE) and len(judged) < runs:
                    began = time.perf_counter()
                    await service.observe(question.drill)
                    judged.append(time.perf_counter() - began)
                began = time.perf_counter()
                session.record(Attempt(question.module, question.candidate.item, AttemptKind.INTERVIEW,
                                       number % 2 == 0, verdict={ATTEMPT_NOTE: {"interview": interview.id,
                                                                                "as": question.kind.value}}))
                records.append(time.perf_counter() - began)
                interview.selector.answered(number % 2 == 0)
                interview.current = None
        finally:
            await service.close()
            store.close()
    print(f"pool: {len(interview.selector.pool)} questions over {len(scope.modules)} modules")
    print(f"{'(a) start an interview (pool and staircase)':<52} {start * 1000:7.1f} ms")
    print(line("(b) choose the next question", picks))
    print(line("(b) record an answer", records))
    print(line("(b) both: answer to next question (goal < 300 ms)", [p + r for p, r in zip(picks, records)]))
    print(line("(c) the sandbox run judging a prediction (warm)", judged))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--runs", type=int, default=12)
    args = parser.parse_args()
    asyncio.run(main(args.questions, args.runs))
