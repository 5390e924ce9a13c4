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

__all__ = ["Draw", "explore", "verify", "same", "difference", "TRIALS"]

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

    def floating(self, lo: float, hi: float, steps: int = 64, avoid=()) -> float:
        """A float on a grid of ``steps`` in [lo, hi], shrinking toward the grid point nearest 0.

        ``avoid``: points the function is not smooth at (0 for ReLU, a clamp's bounds), where two
        right answers differ (a subgradient): a draw that lands on one moves half a grid step up.
        """
        i = self.integer(0, steps) if lo >= 0 else self.integer(-steps, steps) if hi > 0 else self.integer(-steps, 0)
        span = max(abs(lo), abs(hi))
        value = min(max(i * span / steps, lo), hi)
        if any(value == point for point in avoid):
            value = value + span / (2 * steps) if value + span / (2 * steps) <= hi else value - span / (2 * steps)
        return value

    def tensor(self, shape, lo: int = -9, hi: int = 9, dtype=None, distinct: bool = False, avoid=()):
        """A tensor of ``shape`` (ints) with whole-number entries in [lo, hi] (int64 unless ``dtype``).

        ``distinct``: no two entries equal (no ties for a sort, an argmax or a top-k to break two ways),
        so the range must hold as many values as the tensor; ``avoid``: values no entry takes (the kink
        of a ReLU at 0): each moves to the next value up (down at ``hi``) that is allowed.
        """
        import torch

        shape = tuple(int(s) for s in shape)
        count = 1
        for s in shape:
            count *= s
        allowed = [v for v in range(lo, hi + 1) if v not in avoid]
        if distinct and count > len(allowed):
            raise ValueError(f"draw.tensor: {count} distinct values do not fit in [{lo}, {hi}]")
        values: list[int] = []
        for _ in range(count):
            v = self.integer(lo, hi)
            free = [a for a in allowed if not (distinct and a in values)]
            if v not in free:  # the nearest allowed value above (else below): shrinking still heads for 0
                v = min((a for a in free if a > v), default=None) or max(a for a in free if a < v)
            values.append(v)
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


def same(out, want, tolerance: float = 0.0, rtol: float = 0.0, compare=None) -> bool:
    """Whether ``out`` is ``want``: a tensor of the same shape, dtype and values, floats within ``tolerance``
    (absolute) plus ``rtol`` times ``|want|``; or, given ``compare(out, want)``, what it says (a true
    value, or ``None``/``""`` for a match; a false value or a message string for a mismatch)."""
    if isinstance(out, str) and out.startswith("raised "):
        return False
    if compare is not None:
        verdict = compare(out, want)
        return verdict is True or verdict is None or verdict == ""
    if hasattr(want, "shape") and hasattr(want, "dtype"):
        if not (hasattr(out, "shape") and tuple(out.shape) == tuple(want.shape)):
            return False
        if _dtype_differs(out, want, tolerance or rtol):
            return False
        if tolerance or rtol:
            import torch

            return bool(torch.allclose(out.double(), want.double(), atol=tolerance, rtol=rtol))
        return bool((out == want).all())
    if isinstance(want, float) and isinstance(out, (int, float)):
        return abs(out - want) <= tolerance + rtol * abs(want)
    return type(out) is type(want) and out == want


def _dtype_differs(out, want, within_tolerance) -> str:
    """What is wrong with ``out``'s dtype, or "". Compared exactly, the dtype is part of the contract (equal
    values in float32 where int64 was asked for are another result); within a tolerance only the kind must
    match (a float64 spec may judge a float32 result), never an integer result for a float one."""
    got = getattr(out, "dtype", None)
    if got == want.dtype or (within_tolerance and got is not None and _kind(got) == _kind(want.dtype)):
        return ""
    return f"dtype {got}, expected {want.dtype}"


def _kind(dtype) -> tuple[bool, bool]:
    return dtype.is_complex, dtype.is_floating_point


def explore(fn, cases, spec, trials: int = TRIALS, seed: int = 0, tolerance: float = 0.0, rtol: float = 0.0,
            compare=None) -> dict:
    """The learner's process: ``fn`` on every trial, and the first failure shrunk (as data for :func:`verify`).

    ``spec`` here only guides the search for a small counterexample; the judge decides.
    """
    outputs, first = [], None
    for i in range(trials):
        args, choices = _trial(cases, seed, i, trials)
        out = _call(fn, args)
        outputs.append(out)
        if first is None and not same(out, spec(*_copy(args)), tolerance, rtol, compare):
            first = (i, choices)
    found = {"seed": seed, "trials": outputs, "shrunk": None}
    if first is not None:
        choices, out, steps = _shrink(fn, cases, spec, first[1], (tolerance, rtol, compare))
        found["shrunk"] = {"trial": first[0], "choices": choices, "output": out, "steps": steps}
    return found


def _fails(fn, cases, spec, choices, matching):
    try:
        args, used = _replayed(cases, choices)
    except Exception:  # noqa: BLE001 - a choice sequence the generator cannot build a case from
        return None
    out = _call(fn, args)
    return (used, out) if not same(out, spec(*_copy(args)), *matching) else None


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


def _shrink(fn, cases, spec, choices: list[int], matching: tuple):
    best = _fails(fn, cases, spec, choices, matching)
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
            found = _fails(fn, cases, spec, candidate, matching)
            if found is not None and _simpler(found[0], best[0]):
                best, improved, steps = found, True, steps + 1
                break
    return best[0], best[1], steps


SHOWN = 36  # entries of a tensor a message spells out (a 6x6 block); past that, its shape and a summary


def _brief(value) -> str:
    """A value for a message: a small tensor's entries, a large one's shape, dtype and first entries."""
    if hasattr(value, "tolist") and hasattr(value, "numel"):
        if value.numel() <= SHOWN:
            return str(value.tolist())
        first = ", ".join(f"{x:g}" if isinstance(x, float) else str(x) for x in value.flatten()[:6].tolist())
        return f"tensor of shape {tuple(value.shape)}, {str(value.dtype).removeprefix('torch.')} [{first}, ...]"
    return repr(value)


def _show(args: tuple) -> str:
    return ", ".join(_brief(a) for a in args)


def _value(out) -> str:
    if isinstance(out, str) and out.startswith("raised "):
        return out
    return f"= {_brief(out)}"


def difference(out, want, tolerance: float = 0.0, rtol: float = 0.0) -> str:
    """How ``out`` differs from ``want``, shape first, then the first entries that differ (at most three)."""
    if isinstance(out, str) and out.startswith("raised "):
        return out
    if hasattr(want, "shape") and hasattr(want, "dtype"):
        if not hasattr(out, "shape"):
            return f"a {type(out).__name__}, not a tensor of shape {tuple(want.shape)}"
        if tuple(out.shape) != tuple(want.shape):
            return f"shape {tuple(out.shape)}, expected {tuple(want.shape)}"
        if wrong_dtype := _dtype_differs(out, want, tolerance or rtol):
            return wrong_dtype
        import torch

        a, b = out.double(), want.double()
        wrong = ~torch.isclose(a, b, atol=tolerance, rtol=rtol, equal_nan=True) if (tolerance or rtol) else a != b
        where = wrong.nonzero().tolist()
        shown = "; ".join(f"[{', '.join(map(str, i))}] {_entry(out, i)} (expected {_entry(want, i)})" for i in where[:3])
        return f"{len(where)} of {want.numel()} entries differ: {shown}" + ("; ..." if len(where) > 3 else "")
    return f"{_brief(out)}, expected {_brief(want)}"


def _entry(t, index) -> str:
    x = t[tuple(index)].item() if index else t.item()
    return f"{x:g}" if isinstance(x, float) else str(x)


def verify(name: str, got, cases, spec, trials: int = TRIALS, seed: int = 0, tolerance: float = 0.0,
           rtol: float = 0.0, compare=None) -> None:
    """The judge's process: every trial's case rebuilt from the seed, every exported output checked here.

    Raises AssertionError naming the smallest counterexample found, the seed and how to reproduce it.
    """
    assert isinstance(got, dict) and isinstance(got.get("trials"), list) and len(got["trials"]) == trials, \
        f"{name}: the probe did not run the {trials} trials (use proptest.explore in the test's probe)"
    failing = None
    for i, out in enumerate(got["trials"]):
        args, _ = _trial(cases, seed, i, trials)
        want = spec(*_copy(args))
        if not same(out, want, tolerance, rtol, compare):
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
        if small is not None and not same(shrunk.get("output"), small_want, tolerance, rtol, compare):
            steps = shrunk.get("steps") if isinstance(shrunk.get("steps"), int) else 0
            if steps:
                note += f", shrunk in {steps} step(s) from {name}({_show(args)})"
            args, out, want = small, shrunk.get("output"), small_want
    said = compare(out, want) if compare is not None else None
    if isinstance(said, str) and said:  # the author's comparison says what is wrong in its own words
        what = f"{_value(out)}: {said}"
    else:
        how = _detail(out, want, tolerance, rtol)
        what = f"{_value(out)}, expected {_brief(want)}{'; ' + how if how else ''}"
    raise AssertionError(f"{name}({_show(args)}) {what} — {note}; seed {seed}: the same seed gives the same cases")


def _detail(out, want, tolerance: float, rtol: float) -> str:
    """What the two values alone do not make plain: a wrong shape or dtype, or which entries of a large tensor differ."""
    if isinstance(out, str) or not (hasattr(want, "shape") and hasattr(out, "shape")):
        return ""
    if tuple(out.shape) != tuple(want.shape) or want.numel() > SHOWN or _dtype_differs(out, want, tolerance or rtol):
        return difference(out, want, tolerance, rtol)
    return ""
