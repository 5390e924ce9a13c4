"""proptest, the graders' property tests: seeded trials smallest first, shrinking, reproducible, judged by the judge.

Run here in the test process (it is the inner sandbox's module: standard library and torch);
tests/labs/test_lab_runs.py runs it through the real sandbox's two halves.
"""

from __future__ import annotations

import pytest
import torch

from tutor.sandbox.inner import proptest
from tutor.sandbox.inner.proptest import Draw, explore, verify



def cases(draw):
    return (draw.tensor((draw.size(1, 7),), -9, 9),)


def spec(a):
    return a.clamp(max=3)


def buggy(a):  # wrong as soon as an entry is above 4: the simplest counterexample is the tensor [5]
    return a.clamp(max=3) + (a > 4).long()


def failure(fn, seed=7, trials=60) -> str:
    got = explore(fn, cases, spec, trials=trials, seed=seed)
    with pytest.raises(AssertionError) as caught:
        verify("clamp3", got, cases, spec, trials=trials, seed=seed)
    return str(caught.value)


def test_an_integer_draw_covers_its_range_simplest_first():
    for lo, hi in [(0, 5), (-3, 7), (-9, 9), (2, 6), (-6, -2)]:
        values = [Draw(choices=[k]).integer(lo, hi) for k in range(hi - lo + 1)]
        assert sorted(values) == list(range(lo, hi + 1))
        assert abs(values[0]) == min(abs(v) for v in values)
    assert [Draw(choices=[k]).integer(-9, 9) for k in range(5)] == [0, 1, -1, 2, -2]


def test_trials_start_small_and_reach_the_whole_range():
    sizes = [proptest._trial(cases, 7, i, 100)[0][0].shape[0] for i in range(100)]
    assert sizes[0] == 1 and max(sizes[:10]) <= 2 and max(sizes) == 7
    assert max(int(a.abs().max()) for a in (proptest._trial(cases, 7, i, 100)[0][0] for i in range(5))) <= 1


def test_a_right_function_passes():
    got = explore(spec, cases, spec, trials=60, seed=7)
    assert got["shrunk"] is None and len(got["trials"]) == 60
    verify("clamp3", got, cases, spec, trials=60, seed=7)


def test_a_failure_is_shrunk_to_the_simplest_counterexample_and_names_the_seed():
    message = failure(buggy)
    assert message.startswith("clamp3([5]) = [4], expected [3] — trial "), message
    assert "seed 7" in message and "shrunk in" in message


def test_the_same_seed_gives_the_same_counterexample_and_another_seed_the_same_simplest_one():
    assert failure(buggy) == failure(buggy)
    assert failure(buggy, seed=8).startswith("clamp3([5]) = [4]")


def test_a_raising_function_fails_with_what_it_raised():
    def raises(a):
        if a.shape[0] > 2:
            raise IndexError("too long")
        return spec(a)

    assert failure(raises).startswith("clamp3([0, 0, 0]) raised IndexError: too long, expected [0, 0, 0]")


def test_the_verdict_is_the_judges_whatever_the_learners_process_reports():
    got = explore(buggy, cases, spec, trials=60, seed=7)
    # a forged "shrunk" case that in truth passes: the judge falls back to the first failing trial
    forged = {**got, "shrunk": {"trial": 0, "choices": [0, 0], "output": torch.tensor([0]), "steps": 3}}
    with pytest.raises(AssertionError, match="trial"):
        verify("clamp3", forged, cases, spec, trials=60, seed=7)
    # garbage choices cannot break the judge either
    garbage = {**got, "shrunk": {"choices": ["x"], "output": None}}
    with pytest.raises(AssertionError, match=r"clamp3\(\["):
        verify("clamp3", garbage, cases, spec, trials=60, seed=7)
    # outputs for other cases than the seed's, or too few of them, never pass
    honest = explore(spec, cases, spec, trials=60, seed=8)
    with pytest.raises(AssertionError):
        verify("clamp3", honest, cases, spec, trials=60, seed=7)
    with pytest.raises(AssertionError, match="did not run the 60 trials"):
        verify("clamp3", {"trials": got["trials"][:10]}, cases, spec, trials=60, seed=7)
    # and a right function passes even beside a forged failure report
    right = {**explore(spec, cases, spec, trials=60, seed=7), "shrunk": forged["shrunk"]}
    verify("clamp3", right, cases, spec, trials=60, seed=7)


def test_floats_compare_within_a_tolerance():
    def float_cases(draw):
        return (draw.floating(-1.0, 1.0),)

    def half(x):
        return x / 2

    got = explore(lambda x: x * 0.5 + 1e-9, float_cases, half, trials=20, seed=1, tolerance=1e-6)
    verify("half", got, float_cases, half, trials=20, seed=1, tolerance=1e-6)
    with pytest.raises(AssertionError):
        verify("half", got, float_cases, half, trials=20, seed=1)


def test_a_large_tensors_message_names_its_shape_and_the_entries_that_differ_not_every_entry():
    def big(draw):
        return (draw.tensor((6, 8), -9, 9),)

    def off_at_corner(a):
        out = a.clamp(max=3)
        out[5, 7] += 1
        return out

    got = explore(off_at_corner, big, spec, trials=20, seed=1)
    with pytest.raises(AssertionError) as caught:
        verify("clamp3", got, big, spec, trials=20, seed=1)
    message = str(caught.value)
    assert "tensor of shape (6, 8), int64 [" in message and "1 of 48 entries differ: [5, 7]" in message, message
    assert len(message) < 600, len(message)


def test_a_wrong_shape_is_said_first():
    got = explore(lambda a: spec(a)[None], cases, spec, trials=10, seed=3)
    with pytest.raises(AssertionError, match=r"shape \(1, 1\), expected \(1,\)"):
        verify("clamp3", got, cases, spec, trials=10, seed=3)


def test_the_dtype_is_part_of_an_exact_result_and_its_kind_of_a_tolerant_one():
    # the same values in float32 where the spec gives int64: another result, said as such
    got = explore(lambda a: spec(a).float(), cases, spec, trials=10, seed=3)
    with pytest.raises(AssertionError, match=r"dtype torch.float32, expected torch.int64"):
        verify("clamp3", got, cases, spec, trials=10, seed=3)
    assert proptest.same(torch.tensor([1, 2]), torch.tensor([1, 2]))
    assert not proptest.same(torch.tensor([1, 2], dtype=torch.int32), torch.tensor([1, 2]))
    # within a tolerance a float32 result may be judged by a float64 spec, but not an integer one
    assert proptest.same(torch.tensor([0.5]), torch.tensor([0.5], dtype=torch.float64), tolerance=1e-6)
    assert not proptest.same(torch.tensor([1]), torch.tensor([1.0]), tolerance=1e-6)
    assert "dtype torch.int64, expected torch.float32" in proptest.difference(torch.tensor([1]), torch.tensor([1.0]),
                                                                              tolerance=1e-6)


def test_relative_tolerance_and_a_custom_comparison_with_its_own_message():
    def scaled(draw):
        return (draw.tensor((3,), 1, 9).double() * 1000,)

    def spec_f(a):
        return a * 1.0

    got = explore(lambda a: a * (1 + 1e-7), scaled, spec_f, trials=10, seed=2, rtol=1e-6)
    verify("scale", got, scaled, spec_f, trials=10, seed=2, rtol=1e-6)  # within 1e-6 relative: passes
    with pytest.raises(AssertionError):
        verify("scale", got, scaled, spec_f, trials=10, seed=2)  # exact: fails

    def same_set(out, want):  # an order-free comparison, with a message that teaches
        return "" if sorted(out.tolist()) == sorted(want.tolist()) else "holds other values, not just another order"

    reordered = explore(lambda a: a.flip(0), cases, lambda a: a, trials=10, seed=4, compare=same_set)
    verify("perm", reordered, cases, lambda a: a, trials=10, seed=4, compare=same_set)
    shifted = explore(lambda a: a + 1, cases, lambda a: a, trials=10, seed=4, compare=same_set)
    with pytest.raises(AssertionError, match="holds other values, not just another order") as told:
        verify("perm", shifted, cases, lambda a: a, trials=10, seed=4, compare=same_set)
    # the comparison's own words replace "expected ...", which would state the one order it does not require
    assert "expected" not in str(told.value).split(" — ")[0], str(told.value)


def test_draws_can_avoid_kinks_and_ties():
    for seed in range(30):
        import random

        draw = Draw(rng=random.Random(seed))
        t = draw.tensor((6,), -3, 3, distinct=True, avoid=(0,))
        assert len(set(t.tolist())) == 6 and 0 not in t.tolist()
        assert draw.floating(-1.0, 1.0, steps=4, avoid=(0.0,)) != 0.0
    with pytest.raises(ValueError, match="do not fit"):
        Draw(rng=random.Random(0)).tensor((5,), 0, 3, distinct=True)
    assert Draw(choices=[0, 0, 0]).tensor((3,), -3, 3, distinct=True).tolist() == [0, 1, 2]  # a taken value moves up
