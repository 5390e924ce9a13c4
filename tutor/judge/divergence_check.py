"""What ``pytorch-tutor check`` proves of a first-divergence drill, from the traces of real runs.

The code's first failing line (or stage) is the declared ``answer``; every listed wrong
answer is not it; no ``{trace_until: N}`` hint shows the failing row; the code's final values
break a contract in the judge's process (a repair is decided there, so unchanged code must not
pass); on the solution's trace every contract holds on every row (and on the final values,
in the judge's process); and each declared wrong repair (the symptom patched, not the line that
went wrong) breaks a contract on its final values, with the words its ``says:`` pins.
"""

from __future__ import annotations

from tutor.course.divergence_fields import ASK_KEY
from tutor.course.schema import Drill
from tutor.grading import describe_error
from tutor.judge.divergence import is_right, parse_line


async def divergence_problems(drill: Drill, service) -> tuple[list[str], dict[str, str]]:
    """(problems, observed answer by ask key); ``service`` is a TutoringService with recording off."""
    spec = drill.divergence
    problems: list[str] = []
    outcome = await service.observe(drill)
    result = outcome.result
    if not result.ok or result.observation is None:
        return [f"run: {result.message}"], {}
    obs = result.observation
    if obs.error is not None and obs.error.phase != "code":
        problems.append(f"{obs.error.phase} raised {describe_error(obs.error)}")
    problems.extend(f"fence rule: {f}" for f in obs.fence)
    if obs.trace is None or obs.trace.problem:
        return problems + [f"trace: {obs.trace.problem if obs.trace else 'the run was not traced'}"], {}
    first = outcome.contract_failures[0] if outcome.contract_failures else None
    observed: dict[str, str] = {}
    if first is None:
        cut = f" (the trace reached its cap: {obs.trace.cut} statements after it ran untraced)" if obs.trace.cut else ""
        problems.append(f"no contract fails on the code: the drill has no first divergence{cut}")
    else:
        observed[ASK_KEY] = f"line {first.line}"
        declared = ("line", spec.answer_line) if spec.answer_line is not None else ("stage", spec.answer_stage)
        if not is_right(declared, first, spec):
            problems.append(f"answer: the drill declares {spec.declared}, but the trace first fails on {first.text}")
        for wrong in drill.wrong_answers:
            if is_right(parse_line(wrong.answer, drill.asks[0].options), first, spec):
                problems.append(f"wrong answer {wrong.answer!r} is right: the trace first fails on {first.text}")
        for n in spec.trace_until:
            if n is not None and n >= first.line:
                problems.append(f"hint {{trace_until: {n}}} shows the failing row (line {first.line})")
    if obs.check == "passed":  # the judge decides a repair from the final values alone
        problems.append("the code's final values keep every contract (judge's check passed), so the code left "
                        "unchanged would count as repaired: give a contract that its final values break")
    fixed = await service.observe(drill, drill.solution)
    fixed_obs = fixed.result.observation
    if not fixed.result.ok or fixed_obs is None:
        problems.append(f"solution run: {fixed.result.message}")
        return problems, observed
    if fixed_obs.error is not None:
        problems.append(f"solution raised {describe_error(fixed_obs.error)}")
    problems.extend(f"solution fence rule: {f}" for f in fixed_obs.fence)
    for failure in fixed.contract_failures or ():
        if failure.name:
            problems.append(f"solution: a contract still fails, {failure.text}")
    if fixed_obs.trace is not None and fixed_obs.trace.cut:
        problems.append(f"solution: {fixed_obs.trace.cut} statements past the trace's cap ran untraced, unchecked; "
                        "trace less")
    if fixed_obs.check != "passed" and fixed_obs.error is None:
        problems.append(f"solution's final values break a contract (judge's check {fixed_obs.check}): "
                        f"{fixed_obs.check_message}")
    if drill.wrong_submissions:  # each wrong repair's final values break a contract, in the words it pins
        from tutor.judge.repair_check import wrong_fix_problems

        problems.extend(await wrong_fix_problems(drill, service))
    return problems, observed
