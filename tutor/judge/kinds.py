"""The kinds of prediction a drill can ask for, and the form a learner types."""

from __future__ import annotations

# kind -> (what the learner is asked to type, an example)
KIND_FORMS: dict[str, tuple[str, str]] = {
    "shape": ("a shape", "(2, 3)  or  2x3  or  torch.Size([2, 3]); () for a scalar"),
    "stride": ("strides, one per dimension", "(3, 1)"),
    "dtype": ("a dtype", "float32  or  torch.int64"),
    "device": ("a device", "cpu  or  cuda:0"),
    "bool": ("yes or no", "yes / no / true / false"),
    "int": ("a whole number", "12  or  3*4"),
    "float": ("a number", "0.5  or  1/3  or  1e-3  or  nan"),
    "tensor": ("tensor values as nested lists", "[[1, 2], [3, 4]]"),
    "error": ("an exception class, or `no error`", "RuntimeError  or  no error"),
    "choice": ("the letter of an option", "b"),
    "names": ("names separated by commas", "weight, bias"),
    "text": ("a word or short text", "MulBackward0"),
    "value": ("a Python literal", "[1, (2, 3), None]"),
}

KINDS = frozenset(KIND_FORMS)


def expected_form(kind: str) -> str:
    """A one-line reminder of how to type an answer of ``kind``."""
    what, example = KIND_FORMS[kind]
    return f"Type {what}, e.g. {example}"
