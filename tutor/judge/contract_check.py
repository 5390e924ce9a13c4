"""The judge's half of a first-divergence repair: the contracts checked on the final values, its whole verdict.

The rows of a repaired run come from the learner's process (the trace is recorded where
the code runs), so the learner's code could write any rows it liked: they are shown, and
they answer "which line?" for the drill's own code, but they never decide a repair. The
verdict is this ``check``, which the judge's fresh process runs on the data the learner's
process exported, with its own, untouched torch — the shape (with symbols), dtype,
requires_grad, range and finiteness of each contract's name as the code left it, and each
``holds:`` expression evaluated there. (``pytorch-tutor check`` proves that a drill's own
code fails it, so unchanged code is never "repaired".) It is generated here as source
text, so the sandbox needs nothing new to run it.
"""

from __future__ import annotations

from tutor.course.divergence_fields import FirstDivergence

_CHECK = '''
def __tutor_contracts(namespace, contracts):
    import torch
    symbols = {}
    for name, shape, low_high, finite, requires_grad, dtype, holds in contracts:
        if name not in namespace:
            continue  # bound only inside the traced function: nothing of it is left to judge
        value = namespace[name]
        if any(c.__name__ == "Unjudgeable" for c in type(value).__mro__):  # what the judge could not receive
            raise AssertionError(object.__getattribute__(value, "_why"))
        if holds is not None:
            assert eval(holds, namespace), f"{name}: `{holds}` is false after the code"
        if shape is None and low_high is None and finite is None and requires_grad is None and dtype is None:
            continue
        if not isinstance(value, torch.Tensor):
            if isinstance(value, (int, float)) and not isinstance(value, bool) and shape is dtype is requires_grad is None:
                value = torch.tensor(float(value))
            else:
                raise AssertionError(f"{name} is a {type(value).__name__}, not a tensor")
        t = value.detach()
        if shape is not None:
            assert t.dim() == len(shape), f"{name} shape {list(t.shape)}, contract {shape}"
            for want, got in zip(shape, t.shape):
                if isinstance(want, str):
                    want = symbols.setdefault(want, int(got))
                assert want == got, f"{name} shape {list(t.shape)}, contract {shape}"
        if dtype is not None:
            assert str(t.dtype) == dtype, f"{name} dtype {t.dtype}, contract {dtype}"
        if requires_grad is not None:
            assert value.requires_grad == requires_grad, f"{name} requires_grad {value.requires_grad}"
        if t.numel() == 0 or t.is_meta or t.is_complex():
            continue
        f = t.double() if t.layout == torch.strided else t.to_dense().double()
        if finite:
            assert bool(torch.isfinite(f).all()), f"{name} is not finite"
        if low_high is not None:
            assert not bool(torch.isnan(f).any()), f"{name} has NaN"
            low, high = low_high
            assert float(f.min()) >= low and float(f.max()) <= high, (
                f"{name} spans {float(f.min()):g} to {float(f.max()):g}, contract range [{low:g}, {high:g}]")


__tutor_contracts(globals(), {contracts!r})
'''


def final_check(spec: FirstDivergence) -> str:
    """The check source for the judge's process (names and expressions are the author's, validated)."""
    contracts = [(c.name, list(c.shape) if c.shape is not None else None,
                  list(c.range) if c.range is not None else None, c.finite, c.requires_grad, c.dtype, c.holds)
                 for c in spec.contracts]
    return _CHECK.replace("{contracts!r}", repr(contracts))
