"""``pytorch-tutor check`` for a lab: the starter fails, the reference passes, every wrong submission is rejected.

A wrong submission must be rejected by the very test it names (a lab whose tests
pass it, or reject it only by accident of another test, is a lab with a hole),
and the learner who submits it must be shown its misconception, so the matching
is proved too; with `says:`, so are the words the test's message tells them.
"""

from __future__ import annotations

from tutor.grading import describe_error
from tutor.judge import labs


async def lab_problems(drill, service, outcomes: dict[str, str] | None = None,
                       why: dict[str, str] | None = None) -> list[str]:
    """Every claim of a lab that does not hold, in words an author acts on.

    ``service`` is the tutoring service with recording off: the same runs a learner's file gets.
    ``outcomes``, when given, receives which tests each run passed (starter, solution, each wrong
    submission), so that ``check`` under two kernel settings can say when a verdict moved; ``why``
    the failing tests' messages, to say how.
    """
    outcomes = {} if outcomes is None else outcomes
    why = {} if why is None else why

    def record(key: str, results) -> None:
        outcomes[key] = _passing(results)
        why[key] = "; ".join(f"{r.name}: {r.message}" for r in results if not r.passed)[:600]

    problems: list[str] = []
    starter = await service.observe(drill)
    if not starter.result.ok:
        return [f"starter run: {starter.result.message}"]
    obs = starter.result.observation
    if obs.error is not None and obs.error.phase not in ("code", "probe"):
        problems.append(f"{obs.error.phase} raised {describe_error(obs.error)}")
    if labs.all_passed(starter.tests) and obs.error is None:
        problems.append("the starter already passes every test: an unsolved lab must fail")
    if not starter.tests:
        problems.append("the starter's run reported no test results")
    record("starter", starter.tests)
    problems.extend(f"fence rule: {f}" for f in obs.fence if not f.startswith("check: "))

    solved = await service.observe(drill, drill.solution, files=labs.reference_files(drill))
    problems.extend(_solution_problems(solved))
    record("solution", solved.tests)

    for i, wrong in enumerate(drill.wrong_submissions):
        files = {**labs.reference_files(drill), **dict(wrong.files)}
        outcome = await service.observe(drill, wrong.code, files=files)
        where = f"wrong submission {i + 1} ({wrong.test})"
        if not outcome.result.ok:
            problems.append(f"{where}: run {outcome.result.status}: {outcome.result.message}")
            continue
        record(f"wrong submission {i + 1}", outcome.tests)
        named = next((t for t in outcome.tests if t.name == wrong.test), None)
        if named is None:
            problems.append(f"{where}: no result for the test {wrong.test!r}")
        elif named.passed:
            passed_all = labs.all_passed(outcome.tests) and outcome.error is None
            problems.append(f"{where}: {'is accepted by every test' if passed_all else 'passes the test it names'}"
                            f" ({labs.summary(outcome.tests)})")
        elif wrong.says and wrong.says not in named.message:
            problems.append(f"{where}: the learner is told {named.message!r}, which does not say {wrong.says!r}")
        if not wrong.files and outcome.misconception != wrong.misconception:
            problems.append(f"{where}: a learner submitting it would not be shown its misconception")
    return problems


def _passing(results) -> str:
    """Which tests passed, by name: what a verdict rests on (not the messages, which may quote numbers)."""
    return ", ".join(f"{r.name} {'passes' if r.passed else 'fails'}" for r in results) or "no test results"


def _solution_problems(solved) -> list[str]:
    if not solved.result.ok:
        return [f"solution run: {solved.result.message}"]
    out = []
    if solved.error is not None:
        out.append(f"solution raised {describe_error(solved.error)}")
    for test in solved.tests:
        if not test.passed:
            out.append(f"solution fails the test {test.name!r}: {test.message}")
    out.extend(f"solution fence rule: {f}" for f in solved.fence)
    return out
