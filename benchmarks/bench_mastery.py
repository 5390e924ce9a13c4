"""Benchmark: does the per-mechanism estimate (tutor/progress/mastery.py) help, and is it calibrated?

Replays synthetic learners over the real course's tagged drills (the built-in lessons), with two
practice policies, and prints the figures side by side in one run:

(a) attempts until the learner truly knows MASTERY_SHARE of the course's mechanisms that have at
    least two drills: today's fixed order (every drill in course order, then again from the start)
    against the weak-spot policy (the same new work, with one drill from the weak-spot queue woven in
    after every WEAK_SPOT_EVERY new ones; once new work runs out, the weak spots, then the least-known
    mechanism's drills);
(b) the estimate's calibration: log loss and AUC of its predicted next-attempt correctness against a
    constant baseline (the right-answer rate of the earlier half), on a time-ordered split: each
    learner's first half of attempts is the past, the second half is scored.

The synthetic learner (known ground truth, deliberately not the model's own parameters):
- each mechanism (tag) is known at the start with probability TRUE_PRIOR (0.35);
- an attempt on a drill teaches each of its unknown mechanisms with probability TRUE_LEARN (0.2);
- a drill is answered right with probability 1 - TRUE_SLIP (0.08) when all its mechanisms are known,
  else TRUE_GUESS (0.15);
- a wrong answer while a mechanism is unknown matches one of the drill's declared misconceptions
  with probability MISCONCEPTION_RATE (0.7), when the drill declares any.

    .venv/bin/python benchmarks/bench_mastery.py [--learners 10] [--seed 1]

No budget: it reports, it does not pass or fail.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.course.loader import load_course  # noqa: E402
from tutor.locations import builtin_course_dir  # noqa: E402
from tutor.progress.mastery import (WEAK_SPOT_EVERY, mechanisms_of, observe, predicted_correct,  # noqa: E402
                                    weak_spot_queue)
from tutor.progress.store import Attempt  # noqa: E402

TRUE_PRIOR = 0.35
TRUE_LEARN = 0.2
TRUE_SLIP = 0.08
TRUE_GUESS = 0.15
MISCONCEPTION_RATE = 0.7
MASTERY_SHARE = 0.9
ATTEMPT_CAP_PER_DRILL = 4  # a run stops after this many attempts per drill if the share is not reached


class Learner:
    def __init__(self, tags: set[str], rng: random.Random):
        self.rng = rng
        self.known = {t for t in sorted(tags) if rng.random() < TRUE_PRIOR}

    def attempt(self, drill_tags: tuple[str, ...], declares_misconception: bool) -> tuple[bool, bool]:
        """(right, a declared misconception showed), then learning from the drill's observation."""
        unknown = [t for t in drill_tags if t not in self.known]
        right = self.rng.random() < ((1 - TRUE_SLIP) if not unknown else TRUE_GUESS)
        revealed = (not right and bool(unknown) and declares_misconception
                    and self.rng.random() < MISCONCEPTION_RATE)
        for tag in unknown:
            if self.rng.random() < TRUE_LEARN:
                self.known.add(tag)
        return right, revealed


def predicted(mechanisms, drill_tags) -> float:
    known = math.prod(mechanisms[t].known for t in drill_tags)
    return predicted_correct(known)


def replay(course, order, misconceived, target, policy: str, seed: int):
    """One learner under ``policy``: attempts to reach the mastery share, and (prediction, outcome) pairs."""
    tags, mechanisms = mechanisms_of(course)
    learner = Learner(set(mechanisms), random.Random(seed))
    history: list[Attempt] = []
    pairs: list[tuple[float, bool]] = []
    new = list(order)
    since_weak, last = 0, None
    cap = ATTEMPT_CAP_PER_DRILL * len(order)
    for step in range(1, cap + 1):
        key = None
        if policy == "weak-spot" and (since_weak >= WEAK_SPOT_EVERY or not new):
            key = next((k for k in weak_spot_queue(mechanisms, history) if k != last), None)
            if key is None and not new:  # no misconception showing: the least-known mechanism's drills
                weakest = min((m for m in mechanisms.values() if not m.mastered), key=lambda m: m.known, default=None)
                key = next((k for k in (weakest.drills if weakest else []) if k != last), None)
        if key is not None:
            since_weak = 0
        else:
            if not new:
                new = list(order)  # the fixed order's review: the course again from the start
            key = new.pop(0)
            since_weak += 1
        pairs.append((predicted(mechanisms, tags[key]), False))
        right, revealed = learner.attempt(tags[key], key in misconceived)
        pairs[-1] = (pairs[-1][0], right)
        observe(mechanisms, tags[key], key, right, ["declared misconception"] if revealed else [])
        history.append(Attempt(key[0], key[1], "prediction", right))
        last = key
        if len(target & learner.known) >= MASTERY_SHARE * len(target):
            return step, pairs
    return cap, pairs


def log_loss(pairs) -> float:
    eps = 1e-6
    return -sum(math.log(max(eps, p if y else 1 - p)) for p, y in pairs) / len(pairs)


def auc(pairs) -> float:
    """The chance a right attempt is ranked above a wrong one (ties count half): Mann-Whitney."""
    ranked = sorted(pairs, key=lambda pair: pair[0])
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        mean_rank = (i + 1 + j) / 2
        rank_sum += mean_rank * sum(1 for _, y in ranked[i:j] if y)
        i = j
    right = sum(1 for _, y in pairs if y)
    wrong = len(pairs) - right
    return (rank_sum - right * (right + 1) / 2) / (right * wrong) if right and wrong else 0.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    course = load_course(builtin_course_dir())
    tags, mechanisms = mechanisms_of(course)
    order = [(m.id, d.id) for m in course.modules() for d in m.drills if (m.id, d.id) in tags]
    misconceived = {(m.id, d.id) for m in course.modules() for d in m.drills if d.wrong_answers}
    target = {t for t, m in mechanisms.items() if len(m.drills) >= 2}
    print(f"Course: {len(order)} tagged drills, {len(mechanisms)} mechanisms, {len(target)} with two drills or more "
          f"(the target: {MASTERY_SHARE:.0%} of them truly known); {args.learners} synthetic learners")
    started = time.perf_counter()
    steps: dict[str, list[int]] = {"fixed order": [], "weak-spot": []}
    split: dict[str, tuple[list, list]] = {}
    for policy in steps:
        past, future = [], []
        for n in range(args.learners):
            taken, pairs = replay(course, order, misconceived, target, policy, args.seed * 1000 + n)
            steps[policy].append(taken)
            half = len(pairs) // 2
            past += pairs[:half]
            future += pairs[half:]
        split[policy] = (past, future)
    print("\n(a) attempts to reach the mastery target (mean over learners; lower is better)")
    fixed, weak = (sum(steps[p]) / len(steps[p]) for p in ("fixed order", "weak-spot"))
    print(f"  {'fixed order':<14}{fixed:>9.0f}")
    print(f"  {'weak-spot':<14}{weak:>9.0f}   ratio weak-spot / fixed order: {weak / fixed:.2f}")
    print("\n(b) calibration of predicted next-attempt correctness, later half of each learner's attempts")
    print(f"  {'policy':<14}{'attempts':>9}{'BKT log loss':>14}{'constant':>10}{'ratio':>7}"
          f"{'BKT AUC':>9}{'constant':>10}")
    for policy, (past, future) in split.items():
        rate = sum(y for _, y in past) / len(past)
        constant = [(rate, y) for _, y in future]
        ours, base = log_loss(future), log_loss(constant)
        print(f"  {policy:<14}{len(future):>9}{ours:>14.3f}{base:>10.3f}{ours / base:>7.2f}"
              f"{auc(future):>9.3f}{auc(constant):>10.3f}")
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
