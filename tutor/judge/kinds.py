"""The kinds of prediction a drill can ask for, and the form a learner types.

The examples fill the answer box before anything is typed, so they must never answer
a drill: ``pytorch-tutor check`` judges every example against every ask of its kind
and refuses one that is accepted. The notes are spellings (``()`` for a scalar,
``no error``), not values offered as answers. Both are plain text (a placeholder and
an unreadable answer's message are not Markdown): no backticks, no emphasis marks.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KindForm:
    what: str  # what the learner is asked to type
    examples: tuple[str, ...]  # sample answers in this form; none may answer a drill in the course
    note: str = ""  # spellings worth knowing, not sample values


KIND_FORMS: dict[str, KindForm] = {
    "shape": KindForm("a shape", ("(7, 5)", "7x5", "torch.Size([7, 5])"), "() if scalar"),
    "stride": KindForm("strides, one per dimension", ("(35, 5, 1)",)),
    "dtype": KindForm("a dtype", ("complex32", "torch.complex32")),
    "device": KindForm("a device", ("cuda:7",), "spelled cpu, cuda:N or meta"),
    "bool": KindForm("yes or no", (), "true / false work too"),
    "int": KindForm("a whole number", ("1234", "617*2")),
    "float": KindForm("a number", ("0.0625", "1/16", "6.25e-2"), "also nan, inf"),
    "tensor": KindForm("tensor values as nested lists", ("[[7, 9], [8, 6]]",)),
    "error": KindForm('an exception class or "no error"', ("OverflowError",)),
    "choice": KindForm("the letter of an option", ()),
    "names": KindForm("names separated by commas", ("alpha, omega",)),
    "text": KindForm("a word or short text", ("SomeName",)),
    "value": KindForm("a Python literal", ("[7, (8, 9), None]",)),
}

KINDS = frozenset(KIND_FORMS)  # what a lesson's `ask:` may say
# The one prediction of a first-divergence drill (``judge/divergence.py``): never an ask's `kind:` in a lesson.
LINE_KIND = "line"
KIND_FORMS_ALL = {**KIND_FORMS, LINE_KIND: KindForm("a line number of the code, or a stage's name", (), "N, line N or LN")}


def expected_form(kind: str) -> str:
    """A one-line reminder of how to type an answer of ``kind``."""
    form = KIND_FORMS_ALL[kind]
    text = f"Type {form.what}"
    if form.examples:
        text += ", e.g. " + " or ".join(form.examples)
    if form.note:  # a spelling, never introduced as an example ("e.g. yes / no")
        text += "; " + form.note
    return text


def form_examples(kind: str) -> tuple[str, ...]:
    """The sample answers shown for ``kind``: what ``check`` proves answers no drill."""
    return KIND_FORMS_ALL[kind].examples


def option_letter(index: int) -> str:
    """The letter an option is shown and typed with: 0 -> "a"."""
    return chr(ord("a") + index)


def option_label(index: int, text: str) -> str:
    """An option as it is listed and as a choice answer is echoed back: "b) a copy"."""
    return f"{option_letter(index)}) {text}"
