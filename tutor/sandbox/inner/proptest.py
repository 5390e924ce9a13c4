"""Property tests for graders, inside the sandbox: seeded cases, smallest first, shrunk counterexamples.

Served to every drill as the module ``proptest`` (``runner.py``; standard library and
torch only, like the rest of the inner sandbox: Hypothesis is not there by design).
A lab writes a generator of cases and uses it from both halves of a judged run::

    import proptest
    def cases(draw):                              # one case: every value it draws
        n = draw.size(1, 8)                       #   sizes shrink toward the low end
        return (draw.tensor((n,), -9, 9),)        #   values toward 0
    # the test's probe (the learner's process):  got = proptest.explore(cumsum, cases, spec, seed=SEED)
    # the test's check (the judge's process):    proptest.verify("cumsum", got, cases, spec, seed=SEED)

**Cases.** A case is built from a *choice sequence*: each ``draw`` takes the next
non-negative integer, 0 being the simplest value (the smallest size, the value nearest 0).
Trial ``i`` of ``trials`` draws its choices from a generator seeded by ``(seed, i)`` within
a bound that grows with ``i``: the first trials are small, the last use the whole range.

**Shrinking.** In the learner's process :func:`explore` runs the function on every trial;
from the first failing one it looks for a simpler choice sequence that still fails
(shorter; each choice set to 0, halved, two or one less), calling the function again, until none
is simpler. The same seed gives the same trials and the same shrinking, so the same
counterexample.

**Trust.** The verdict never comes from the learner's process: :func:`verify` rebuilds every
trial's case from the seed itself and compares each output the learner's process exported
with the spec, computed in the judge. Shrinking had to call the learner's function, so it
ran there; the judge only uses its result as the *message* (after checking that the
learner's output on that case really is wrong), never as the verdict.
"""

from __future__ import annotations

import random

__all__ = ["Draw", "explore", "verify", "same", "TRIALS"]

TRIALS = 100
SHRINK_CALLS = 400  # the learner's function is called at most this often while shrinking
MAX_CHOICES = 4096


class Draw:
    """Values for one case from a choice sequence: replayed (``choices``) or drawn fresh and recorded."""

    def __init__(self, choices: list[int] | None = None, rng: random.Random | None = None, bound: float = 1.0):
        self.replay = list(choices) if choices is not None else None
        self.rng = rng
        self.bound = bound  # the fraction of each range a fresh draw may use: small trials first
        self.choices: list[int] = []

    def _choice(self, span: int) -> int:
        """A choice in [0, span): replayed (wrapped into the range), or drawn within the bound."""
        if len(self.choices) >= MAX_CHOICES:
            raise ValueError("a case drew more than 4096 values")
        if self.replay is not None:
            k = self.replay[len(self.choices)] if len(self.choices) < len(self.replay) else 0
            k = k % span if span else 0
        else:
            top = max(0, min(span - 1, int(round(self.bound * (span - 1)))))
            k = self.rng.randint(0, top) if top else 0
        self.choices.append(k)
        return k

    def integer(self, lo: int, hi: int) -> int:
        """An int in [lo, hi]; the simplest is the one nearest 0, then alternately above and below it."""
        if lo > hi:
            raise ValueError(f"draw.integer({lo}, {hi}): empty range")
        target = min(max(0, lo), hi)
        k = self._choice(hi - lo + 1)
        # k = 0, 1, 2, 3, ... -> target, target + 1, target - 1, target + 2, ...; past the nearer bound, onward
        up, down = hi - target, target - lo
        both = min(up, down)
        if k <= 2 * both:
            return target + (k + 1) // 2 if k % 2 else target - k // 2
        farther = both + (k - 2 * both)
        return target + farther if up > down else target - farther

    def size(self, lo: int = 0, hi: int = 8) -> int:
        """A length in [lo, hi], shrinking toward ``lo``."""
        return lo + self._choice(hi - lo + 1)

    def boolean(self) -> bool:
        return self._choice(2) == 1

    def choice(self, options):
        """One of ``options``, shrinking toward the first."""
        options = list(options)
        return options[self._choice(len(options))]

    def floating(self, lo: float, hi: float, steps: int = 64) -> float:
        """A float on a grid of ``steps`` in [lo, hi], shrinking toward the grid point nearest 0."""
        i = self.integer(0, steps) if lo >= 0 else self.integer(-steps, steps) if hi > 0 else self.integer(-steps, 0)
        span = max(abs(lo), abs(hi))
        return min(max(i * span / steps, lo), hi)

    def tensor(self, shape, lo: int = -9, hi: int = 9, dtype=None):
        """An integer tensor of ``shape`` (ints) with entries in [lo, hi] (int64 unless ``dtype``)."""
        import torch

        shape = tuple(int(s) for s in shape)
        count = 1
        for s in shape:
            count *= s
        values = [self.integer(lo, hi) for _ in range(count)]
        return torch.tensor(values, dtype=dtype or torch.int64).reshape(shape)


def _trial(cases, seed: int, index: int, trials: int):
    rng = random.Random(f"{seed}:{index}")
    draw = Draw(rng=rng, bound=(index + 1) / trials)
    case = cases(draw)
    return _as_args(case), draw.choices


def _replayed(cases, choices: list[int]):
    draw = Draw(choices=choices)
    case = cases(draw)
    return _as_args(case), draw.choices


def _as_args(case) -> tuple:
    return case if isinstance(case, tuple) else (case,)


def _copy(args: tuple) -> tuple:
    return tuple(a.clone() if hasattr(a, "clone") else a for a in args)


def _call(fn, args: tuple):
    try:
        return fn(*_copy(args))
    except Exception as exc:  # noqa: BLE001 - the learner's bug, reported as this case's result
        return f"raised {type(exc).__name__}: {exc}"


def same(out, want, tolerance: float = 0.0) -> bool:
    """Whether ``out`` is ``want``: a tensor of the same shape and values (floats within ``tolerance``)."""
    if isinstance(out, str) and out.startswith("raised "):
        return False
    if hasattr(want, "shape") and hasattr(want, "dtype"):
        if not (hasattr(out, "shape") and tuple(out.shape) == tuple(want.shape)):
            return False
        if tolerance:
            import torch

            return bool(torch.allclose(out.double(), want.double(), atol=tolerance, rtol=0))
        return bool((out == want).all())
    if isinstance(want, float) and isinstance(out, (int, float)):
        return abs(out - want) <= tolerance
    return type(out) is type(want) and out == want


def explore(fn, cases, spec, trials: int = TRIALS, seed: int = 0, tolerance: float = 0.0) -> dict:
    """The learner's process: ``fn`` on every trial, and the first failure shrunk (as data for :func:`verify`).

    ``spec`` here only guides the search for a small counterexample; the judge decides.
    """
    outputs, first = [], None
    for i in range(trials):
        args, choices = _trial(cases, seed, i, trials)
        out = _call(fn, args)
        outputs.append(out)
        if first is None and not same(out, spec(*_copy(args)), tolerance):
            first = (i, choices)
    found = {"seed": seed, "trials": outputs, "shrunk": None}
    if first is not None:
        choices, out, steps = _shrink(fn, cases, spec, first[1], tolerance)
        found["shrunk"] = {"trial": first[0], "choices": choices, "output": out, "steps": steps}
    return found


def _fails(fn, cases, spec, choices, tolerance):
    try:
        args, used = _replayed(cases, choices)
    except Exception:  # noqa: BLE001 - a choice sequence the generator cannot build a case from
        return None
    out = _call(fn, args)
    return (used, out) if not same(out, spec(*_copy(args)), tolerance) else None


def _candidates(choices: list[int]):
    """Simpler choice sequences, simplest changes first: shorter, then each choice zeroed, halved, decremented."""
    for cut in range(len(choices)):  # drop one choice (later ones shift forward)
        yield choices[:cut] + choices[cut + 1:]
    for i, k in enumerate(choices):
        if k:
            # an integer's choices alternate sides of 0 (0, 1, -1, 2, -2, ...): k - 2 is the same sign, one nearer
            half = k // 2
            for smaller in dict.fromkeys((0, half, half - (half - k) % 2, k - 2, k - 1)):
                if 0 <= smaller < k:
                    yield choices[:i] + [smaller] + choices[i + 1:]


def _simpler(a: list[int], b: list[int]) -> bool:
    return (len(a), a) < (len(b), b)


def _shrink(fn, cases, spec, choices: list[int], tolerance: float):
    best = _fails(fn, cases, spec, choices, tolerance)
    if best is None:  # it passed when replayed: the function is not deterministic; keep the trial
        return choices, None, 0
    calls, steps = 0, 0
    improved = True
    while improved and calls < SHRINK_CALLS:
        improved = False
        for candidate in _candidates(best[0]):
            if calls >= SHRINK_CALLS:
                break
            if not _simpler(candidate, best[0]):
                continue
            calls += 1
            found = _fails(fn, cases, spec, candidate, tolerance)
            if found is not None and _simpler(found[0], best[0]):
                best, improved, steps = found, True, steps + 1
                break
    return best[0], best[1], steps


def _show(args: tuple) -> str:
    return ", ".join(str(a.tolist()) if hasattr(a, "tolist") else repr(a) for a in args)


def _value(out) -> str:
    if isinstance(out, str) and out.startswith("raised "):
        return out
    return f"= {out.tolist() if hasattr(out, 'tolist') else out!r}"


def verify(name: str, got, cases, spec, trials: int = TRIALS, seed: int = 0, tolerance: float = 0.0) -> None:
    """The judge's process: every trial's case rebuilt from the seed, every exported output checked here.

    Raises AssertionError naming the smallest counterexample found, the seed and how to reproduce it.
    """
    assert isinstance(got, dict) and isinstance(got.get("trials"), list) and len(got["trials"]) == trials, \
        f"{name}: the probe did not run the {trials} trials (use proptest.explore in the test's probe)"
    failing = None
    for i, out in enumerate(got["trials"]):
        args, _ = _trial(cases, seed, i, trials)
        want = spec(*_copy(args))
        if not same(out, want, tolerance):
            failing = (i, args, out, want)
            break
    if failing is None:
        return
    i, args, out, want = failing
    shrunk = got.get("shrunk")
    note = f"trial {i + 1} of {trials}"
    if isinstance(shrunk, dict) and isinstance(shrunk.get("choices"), list) \
            and all(isinstance(k, int) and k >= 0 for k in shrunk["choices"]):
        try:
            small, _ = _replayed(cases, shrunk["choices"])
            small_want = spec(*_copy(small))
        except Exception:  # noqa: BLE001 - a forged choice sequence: keep the trial's own case
            small = None
        if small is not None and not same(shrunk.get("output"), small_want, tolerance):
            steps = shrunk.get("steps") if isinstance(shrunk.get("steps"), int) else 0
            if steps:
                note += f", shrunk in {steps} step(s) from {name}({_show(args)})"
            args, out, want = small, shrunk.get("output"), small_want
    raise AssertionError(f"{name}({_show(args)}) {_value(out)}, expected {_value(want)[2:]} — {note}; "
                         f"seed {seed}: the same seed gives the same cases")
