"""``pytorch-tutor check`` for a repair's wrong fixes: each is rejected by the check, for the reason declared.

A repair's verdict is its one `check:`. A wrong fix (the symptom patched, not the
mechanism) must make that check's own assertion fail with the words its `says:`
pins; a check that passes it is a hole, and one that rejects it only because the
check itself raised (a NameError, a shape error inside the check) rejects it by
accident, which the learner would be told in words that do not teach the mechanism.
Each fix runs as the learner's edited code does: ``service.observe(drill, code)``.
"""

from __future__ import annotations

from tutor.grading import describe_error


async def wrong_fix_problems(drill, service, observed: dict[str, str] | None = None) -> list[str]:
    """Every declared wrong fix of ``drill`` that the check does not reject as declared, in an author's words.

    ``observed``, when given, receives each fix's check outcome (``check`` compares runs by it).
    One run per fix, one after another: ``check`` already runs as many drills at once as there are cores.
    """
    problems: list[str] = []
    for i, wrong in enumerate(drill.wrong_submissions):
        where = f"wrong fix {i + 1} ({wrong.misconception[:50]})"
        result = (await service.observe(drill, wrong.code)).result
        obs = result.observation
        if not result.ok or obs is None:
            problems.append(f"{where}: run {result.status}: {result.message}")
            continue
        if observed is not None:
            observed[f"wrong fix {i + 1}'s check"] = obs.check
        if obs.error is not None and obs.error.phase not in ("code", "probe"):
            problems.append(f"{where}: {obs.error.phase} raised {describe_error(obs.error)}")
        elif obs.error is not None and obs.error.phase == "code":  # rejected: a fix that raises never passes
            told = describe_error(obs.error)                      # (the learner is shown the error and the check)
            if wrong.says not in told and wrong.says not in (obs.check_text or ""):
                problems.append(f"{where}: it raises {told!r}, which does not say {wrong.says!r}")
        elif obs.check == "passed":
            problems.append(f"{where}: the check accepts it")
        elif obs.check != "failed":
            problems.append(f"{where}: the check did not reject it by its assertion but {obs.check}: {obs.check_text}")
        elif wrong.says not in obs.check_text:
            problems.append(f"{where}: the learner is told {obs.check_text!r}, which does not say {wrong.says!r}")
    return problems
