"""Test-out: a placement drawn from every module a learner asks to skip, decided module by module.

Each module the placement would mark is asked its own questions (``PER_MODULE``: its
prediction drills, with every ask of the drill, run in the sandbox and judged like any
prediction, and its multiple-choice self-checks), so no module is marked on another's
answers. A small placement is topped up to ``PLACEMENT_MIN``. A retry draws questions not
asked before while any remain. Every answer comes back with the right answer and why, so
a failed placement still teaches.

One decision per module (``decide``): a module is marked "tested out" (never "done", see
``tutor.progress.summary``) only when its own questions pass *and* every module it needs is
done, tested out before, or marked by this same placement; so a placement never opens a
module behind a prerequisite the learner neither finished nor tested out of.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from itertools import zip_longest
from typing import Iterable, Mapping

from tutor.course.schema import Ask, Drill, Module, SelfCheck
from tutor.course.variants import present_drill_instance
from tutor.grading import AskOutcome

PER_MODULE = 2  # questions each skipped module answers for itself
PLACEMENT_MIN = 5  # a placement over one or two modules still asks this many
PLACEMENT_PASS = 0.8  # the share of a module's own questions to get right


@dataclass(frozen=True)
class PlacementQuestion:
    module: str
    check: SelfCheck | None = None  # a multiple-choice self-check …
    drill: Drill | None = None  # … or a prediction drill, asked about every one of its asks
    asks: tuple[Ask, ...] = ()

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
    answer: str  # as the learner typed it (a drill's asks joined by "; ")
    correct: bool  # a drill's: every ask right
    right_answer: str  # the option, or what PyTorch observed
    why: str = ""  # the divergence, the misconception, the model answer


@dataclass(frozen=True)
class PlacementDecision:
    """What one placement decided, module by module."""

    marked: tuple[str, ...]  # passed their own questions, with every prerequisite met: tested out now
    failed: tuple[str, ...]  # their own questions did not pass
    held_back: tuple[str, ...]  # passed, but a module they need is neither done nor tested out


def candidates(modules: Iterable[Module]) -> dict[str, list[PlacementQuestion]]:
    """Every question a placement may ask, by module."""
    out: dict[str, list[PlacementQuestion]] = {}
    for module in modules:
        questions = [PlacementQuestion(module.id, check=c) for c in module.self_checks if c.is_choice]
        questions += [PlacementQuestion(module.id, drill=d, asks=tuple(d.asks)) for d in module.drills
                      if not d.is_repair and not d.is_exercise and d.asks]
        if questions:
            out[module.id] = questions
    return out


def draw(modules: list[Module], asked_before: set[str], seed: str) -> list[PlacementQuestion]:
    """``PER_MODULE`` questions from each of ``modules`` (at least ``PLACEMENT_MIN`` in all), in their order;
    none asked before while fresh ones remain."""
    pool = candidates(modules)
    rng = random.Random(seed)
    lanes: dict[str, list[PlacementQuestion]] = {}
    for module_id, questions in pool.items():
        checks = [q for q in questions if not q.runs_code]
        drills = [q for q in questions if q.runs_code]
        rng.shuffle(checks)
        rng.shuffle(drills)
        # alternate: a module is tested on what it explains and on what PyTorch does
        mixed = [q for pair in zip_longest(drills, checks) for q in pair if q is not None]
        # fresh questions first; a repeat only once every fresh one of this module is in
        lanes[module_id] = ([q for q in mixed if q.key not in asked_before] +
                            [q for q in mixed if q.key in asked_before])
    drawn = {m: lane[:PER_MODULE] for m, lane in lanes.items()}
    rest = {m: lane[PER_MODULE:] for m, lane in lanes.items()}
    while sum(map(len, drawn.values())) < PLACEMENT_MIN and any(rest.values()):
        for module_id, lane in rest.items():  # round-robin top-up: no module carries a small test alone
            if lane and sum(map(len, drawn.values())) < PLACEMENT_MIN:
                drawn[module_id].append(lane.pop(0))
    # a drill with variants is asked as a fresh instance (its answers never shown to this placement's taker)
    return [_instance(q, rng) for module_id in lanes for q in drawn[module_id]]


def _instance(question: PlacementQuestion, rng: random.Random) -> PlacementQuestion:
    if question.drill is None or question.drill.variants is None:
        return question
    drill = present_drill_instance(question.drill, rng.randrange(2**31))
    return replace(question, drill=drill, asks=tuple(drill.asks))


def decide(results: list[PlacementResult], order: list[str], needs: Mapping[str, Iterable[str]],
           met: set[str]) -> PlacementDecision:
    """One decision per module asked, in course ``order`` (prerequisites first).

    ``needs``: each module's prerequisites (written ones; an unwritten module stands for its own);
    ``met``: the modules already done or tested out.
    """
    by_module: dict[str, list[bool]] = {}
    for r in results:
        by_module.setdefault(r.question.module, []).append(r.correct)
    satisfied = set(met)
    marked, failed, held_back = [], [], []
    for module_id in (m for m in order if m in by_module):
        own = by_module[module_id]
        if sum(own) / len(own) < PLACEMENT_PASS:
            failed.append(module_id)
        elif all(req in satisfied for req in needs.get(module_id, ())):
            marked.append(module_id)
            satisfied.add(module_id)
        else:
            held_back.append(module_id)
    return PlacementDecision(tuple(marked), tuple(failed), tuple(held_back))


def judge_choice(question: PlacementQuestion, answer: str, chosen: int) -> PlacementResult:
    check = question.check
    right = f"{chr(ord('a') + check.correct)}) {check.options[check.correct]}"
    if chosen == check.correct:
        return PlacementResult(question, answer, True, right)
    given = f"{chr(ord('a') + chosen)}) {check.options[chosen]}"
    return PlacementResult(question, answer, False, right, f"you chose {given}. {check.answer.strip()}")


def judge_prediction(question: PlacementQuestion, answers: Mapping[str, str],
                     outcomes: Mapping[str, AskOutcome | None], run_problem: str = "") -> PlacementResult:
    """A drill question, from the graded asks of its sandbox run: right only when every ask is."""
    said = "; ".join(answers.get(ask.key, "") for ask in question.asks)
    observed, why, correct = [], [], True
    for ask in question.asks:
        outcome = outcomes.get(ask.key)
        if outcome is None or outcome.verdict is None:
            reason = run_problem or (outcome.problem if outcome else "it could not be observed")
            observed.append("?")
            why.append(f"not judged: {reason}")
            correct = False
            continue
        verdict = outcome.verdict
        observed.append(verdict.observed)
        if verdict.correct:
            continue
        correct = False
        parts = [verdict.problem or verdict.divergence]
        if verdict.misconception:
            parts.append(f"that answer reveals a common misconception: {verdict.misconception}")
        why.append("; ".join(p for p in parts if p))
    return PlacementResult(question, said, correct, "; ".join(observed), "; ".join(w for w in why if w))


def passed(results: list[PlacementResult]) -> bool:
    """Every module asked passed its own questions (``decide`` says which are marked)."""
    by_module: dict[str, list[bool]] = {}
    for r in results:
        by_module.setdefault(r.question.module, []).append(r.correct)
    return bool(results) and all(sum(own) / len(own) >= PLACEMENT_PASS for own in by_module.values())


def form_of(question: PlacementQuestion, ask: Ask | None = None) -> str:
    """How to type the answer (the ask's kind, or a letter)."""
    from tutor.judge import expected_form

    return expected_form("choice" if question.check is not None else (ask or question.asks[0]).kind)


__all__ = ["PER_MODULE", "PLACEMENT_MIN", "PLACEMENT_PASS", "PlacementDecision", "PlacementQuestion",
           "PlacementResult", "candidates", "decide", "draw", "form_of", "judge_choice", "judge_prediction",
           "passed"]
