"""Test-out: a placement drawn from the modules a learner asks to skip.

Enough questions to be a real test (5 to 8), drawn from those modules' prediction
drills (run in the sandbox and judged like any prediction) and multiple-choice
self-checks, spread over the modules nearest first. A retry draws questions not
asked before while any remain. Every answer comes back with the right answer and
why, so a failed placement still teaches. Passing marks the skipped modules
"tested out", never "done" (see ``tutor.progress.summary``).
"""

from __future__ import annotations

import random
from itertools import zip_longest
from dataclasses import dataclass
from typing import Iterable

from tutor.course.schema import Ask, Drill, Module, SelfCheck
from tutor.grading import AskOutcome

PLACEMENT_MIN = 5
PLACEMENT_MAX = 8
PLACEMENT_PASS = 0.8


@dataclass(frozen=True)
class PlacementQuestion:
    module: str
    check: SelfCheck | None = None  # a multiple-choice self-check …
    drill: Drill | None = None  # … or a prediction drill, asked about its first ask
    ask: Ask | None = None

    @property
    def item(self) -> str:
        return self.check.id if self.check is not None else self.drill.id

    @property
    def key(self) -> str:
        """Stable across retries: what "asked before" remembers."""
        return f"{self.module}/{'check' if self.check is not None else 'drill'}/{self.item}"

    @property
    def runs_code(self) -> bool:
        return self.drill is not None


@dataclass(frozen=True)
class PlacementResult:
    question: PlacementQuestion
    answer: str  # as the learner typed it
    correct: bool
    right_answer: str  # the option, or what PyTorch observed
    why: str = ""  # the divergence, the misconception, the model answer


def candidates(modules: Iterable[Module]) -> dict[str, list[PlacementQuestion]]:
    """Every question a placement may ask, by module."""
    out: dict[str, list[PlacementQuestion]] = {}
    for module in modules:
        questions = [PlacementQuestion(module.id, check=c) for c in module.self_checks if c.is_choice]
        questions += [PlacementQuestion(module.id, drill=d, ask=d.asks[0]) for d in module.drills
                      if not d.is_repair and not d.is_exercise and d.asks]
        if questions:
            out[module.id] = questions
    return out


def draw(modules: list[Module], asked_before: set[str], seed: str) -> list[PlacementQuestion]:
    """5-8 questions over ``modules`` (nearest prerequisite first), none asked before while fresh ones remain."""
    pool = candidates(modules)
    rng = random.Random(seed)
    for module_id, questions in pool.items():
        checks = [q for q in questions if not q.runs_code]
        drills = [q for q in questions if q.runs_code]
        rng.shuffle(checks)
        rng.shuffle(drills)
        # alternate: a module is tested on what it explains and on what PyTorch does
        pool[module_id] = [q for pair in zip_longest(drills, checks) for q in pair if q is not None]
    wanted = min(PLACEMENT_MAX, sum(len(q) for q in pool.values()))
    drawn: list[PlacementQuestion] = []
    for fresh in (True, False):  # a repeat only once every fresh question is in
        lanes = {m: [q for q in qs if (q.key not in asked_before) == fresh] for m, qs in pool.items()}
        while len(drawn) < wanted and any(lanes.values()):
            for lane in lanes.values():  # round-robin: every skipped module is tested
                if lane and len(drawn) < wanted:
                    drawn.append(lane.pop(0))
    return drawn


def judge_choice(question: PlacementQuestion, answer: str, chosen: int) -> PlacementResult:
    check = question.check
    right = f"{chr(ord('a') + check.correct)}) {check.options[check.correct]}"
    if chosen == check.correct:
        return PlacementResult(question, answer, True, right)
    given = f"{chr(ord('a') + chosen)}) {check.options[chosen]}"
    return PlacementResult(question, answer, False, right, f"you chose {given}. {check.answer.strip()}")


def judge_prediction(question: PlacementQuestion, answer: str, outcome: AskOutcome | None,
                     run_problem: str = "") -> PlacementResult:
    """A drill question, from the graded ask of its sandbox run."""
    if outcome is None or outcome.verdict is None:
        why = run_problem or (outcome.problem if outcome else "it could not be observed")
        return PlacementResult(question, answer, False, "?", f"not judged: {why}")
    verdict = outcome.verdict
    if verdict.correct:
        return PlacementResult(question, answer, True, verdict.observed)
    parts = [verdict.problem or verdict.divergence]
    if verdict.misconception:
        parts.append(f"that answer reveals a common misconception: {verdict.misconception}")
    return PlacementResult(question, answer, False, verdict.observed, "; ".join(p for p in parts if p))


def passed(results: list[PlacementResult]) -> bool:
    return bool(results) and sum(r.correct for r in results) / len(results) >= PLACEMENT_PASS


def form_of(question: PlacementQuestion) -> str:
    """How to type the answer (the ask's kind, or a letter)."""
    from tutor.judge import expected_form

    return expected_form("choice" if question.check is not None else question.ask.kind)


__all__ = ["PLACEMENT_MAX", "PLACEMENT_MIN", "PLACEMENT_PASS", "PlacementQuestion", "PlacementResult",
           "candidates", "draw", "form_of", "judge_choice", "judge_prediction", "passed"]
