"""What both sides of the exchange agree on: its limits, and which names setup bound the judge keeps as its own."""

from __future__ import annotations

import types

MAX_DEPTH = 8
MAX_ITEMS = 4096


def is_constant(name: str, value, torch) -> bool:
    """A check's constant: an UPPER_CASE name of three or more characters that is not a tensor or a model.

    (``T``, ``X`` or ``W`` are variables in math's spelling; ``CASES`` is a test table.)
    """
    return (len(name) >= 3 and name.isupper()
            and not isinstance(value, (torch.Tensor, torch.nn.Module, torch.optim.Optimizer)))


def is_code(value) -> bool:
    """Functions, classes and modules: what setup binds that the judge's own setup binds the same way.

    Everything else setup made (tensors, models, custom objects) may have been changed by
    the learner's code, so it is exported as data or, if it cannot be, made unjudgeable.
    """
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
                              types.ModuleType))
