"""Parse a learner's typed answer into a canonical value for its kind.

Every parser accepts the spellings people actually type and raises
:class:`AnswerError` (never anything else) with a hint on the expected form.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from tutor.judge.kinds import expected_form, option_letter
from tutor.judge.literals import LiteralError, evaluate

MAX_ANSWER = 20_000


class AnswerError(ValueError):
    """The answer could not be read; ``str(exc)`` tells the learner what to type."""


def parse_answer(kind: str, text: str, options: tuple[str, ...] = ()) -> Any:
    if not isinstance(text, str):
        raise AnswerError(expected_form(kind))
    text = text.strip()
    if not text:
        raise AnswerError(f"No answer yet. {expected_form(kind)}")
    if len(text) > MAX_ANSWER:
        raise AnswerError("That answer is too long to read.")
    parser = _PARSERS[kind]
    try:
        return parser(text, options) if kind in ("choice", "line") else parser(text)
    except AnswerError:
        raise
    except (LiteralError, ValueError, TypeError, OverflowError, RecursionError, MemoryError):
        raise AnswerError(f"I can't read {_quote(text)} as {kind}. {expected_form(kind)}") from None


def _quote(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")


_SIZE_WRAPPER = re.compile(r"^(?:torch\.)?size\s*\((.*)\)$", re.IGNORECASE | re.DOTALL)


def parse_dims(text: str) -> tuple[int, ...]:
    """``(2, 3)``, ``[2,3]``, ``2x3``, ``2 × 3``, ``torch.Size([2, 3])``, ``()`` → ``(2, 3)``.

    With commas, each entry may be arithmetic (``(44//2, 3)``, ``(2*3, 4)``); without,
    ``x``, ``×``, ``*`` and spaces separate dimensions (``2x3``, ``2*3``).
    """
    body = text.strip()
    if (m := _SIZE_WRAPPER.match(body)):
        body = m.group(1).strip()
    if body.lower() in ("scalar", "0-d", "0d", "empty", "none", ""):
        return ()
    body = body.strip("()[] \t")
    if not body:
        return ()
    if "," in body:
        return tuple(_whole_number(part) for part in body.split(",") if part.strip())
    parts = [p for p in re.split(r"[\s,x×*]+", body, flags=re.IGNORECASE) if p]
    return tuple(_whole_number(part) for part in parts)


def _whole_number(part: str) -> int:
    part = part.strip()
    if re.fullmatch(r"[+-]?\d{1,12}", part):
        return int(part)
    value = evaluate(part)  # safe arithmetic: 44//2, 2*3 (never eval)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{part!r} is not a whole number")
    return value


_DTYPE_ALIASES = {
    "float32": "float32", "float": "float32", "f32": "float32", "fp32": "float32", "single": "float32",
    "float64": "float64", "double": "float64", "f64": "float64", "fp64": "float64",
    "float16": "float16", "half": "float16", "f16": "float16", "fp16": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "int64": "int64", "long": "int64", "i64": "int64",
    "int32": "int32", "int": "int32", "i32": "int32",
    "int16": "int16", "short": "int16", "i16": "int16",
    "int8": "int8", "i8": "int8",
    "uint8": "uint8", "byte": "uint8", "u8": "uint8",
    "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "bool": "bool", "boolean": "bool",
    "complex64": "complex64", "cfloat": "complex64",
    "complex128": "complex128", "cdouble": "complex128",
    "complex32": "complex32", "chalf": "complex32",
    "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
    "qint8": "qint8", "quint8": "quint8", "qint32": "qint32",
}


def parse_dtype(text: str) -> str:
    key = text.strip().strip("'\"`").lower()
    for prefix in ("torch.", "np.", "numpy."):
        if key.startswith(prefix):
            key = key[len(prefix):]
    if key not in _DTYPE_ALIASES:
        raise AnswerError(f"{_quote(text)} is not a dtype I know. {expected_form('dtype')}")
    return "torch." + _DTYPE_ALIASES[key]


_DEVICE = re.compile(r"^(cpu|cuda|mps|meta|xpu)(?::(\d{1,3}))?$")


def parse_device(text: str) -> str:
    body = text.strip().strip("'\"`").lower().replace(" ", "")
    m = re.fullmatch(r"(?:torch\.)?device\((?:type=)?['\"]?([a-z]+(?::\d+)?)['\"]?(?:,index=(\d+))?\)", body)
    if m:
        body = m.group(1) + (f":{m.group(2)}" if m.group(2) else "")
    m = _DEVICE.match(body)
    if not m:
        raise AnswerError(f"{_quote(text)} is not a device. {expected_form('device')}")
    return body


_TRUE = {"yes", "y", "true", "t", "1", "yep", "correct", "shares", "shared", "same"}
_FALSE = {"no", "n", "false", "f", "0", "nope", "different"}


def parse_bool(text: str) -> bool:
    key = unwrap_scalar(text).strip().strip(".!'\"`").lower()
    if key in _TRUE:
        return True
    if key in _FALSE:
        return False
    raise AnswerError(f"{_quote(text)} is not yes or no. {expected_form('bool')}")


def parse_int(text: str) -> int:
    value = evaluate(unwrap_scalar(text).replace("_", "").replace(",", ""))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AnswerError(f"{_quote(text)} is not a whole number. {expected_form('int')}")
    if isinstance(value, float):
        if not value.is_integer():
            raise AnswerError(f"{_quote(text)} is not a whole number. {expected_form('int')}")
        value = int(value)
    return value


def parse_float(text: str) -> float:
    value = evaluate(unwrap_scalar(text).replace("_", ""))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AnswerError(f"{_quote(text)} is not a number. {expected_form('float')}")
    return float(value)


# How PyTorch and NumPy print a value: tensor([1., 2.], dtype=torch.float64), array([1, 2]).
_TENSOR_WRAPPER = re.compile(r"^(?:torch\.)?(?:tensor|(?:np\.|numpy\.)?array)\s*\((.*)\)$",
                             re.IGNORECASE | re.DOTALL)
_TENSOR_KWARGS = re.compile(r",\s*(dtype|device|requires_grad|grad_fn|size)\s*=.*$", re.DOTALL)
# NumPy prints [22 24 26] and [22. 24. 26.]: a space between two entries stands for a comma.
_NUMPY_GAP = re.compile(r"(?<=[\w.\]])\s+(?=[-+]?(?:[\d.\[]|nan\b|inf\b))", re.IGNORECASE)


def unwrap_printed(text: str) -> str:
    """``tensor(-36.)`` → ``-36.``; ``tensor([1, 2], dtype=torch.int32)`` → ``[1, 2]``."""
    body = text.strip()
    if (m := _TENSOR_WRAPPER.match(body)):
        body = _TENSOR_KWARGS.sub("", m.group(1)).strip()
    return body


def unwrap_scalar(text: str) -> str:
    """A 0-d tensor as printed stands for its number: ``tensor(-36.)`` → ``-36.``."""
    body = unwrap_printed(text)
    return body if body != text.strip() and not body.startswith("[") else text


def parse_tensor(text: str) -> Any:
    """Nested lists of numbers (or a bare number for a 0-d tensor); ``tensor(...)`` and NumPy's spacing accepted."""
    body = _NUMPY_GAP.sub(", ", unwrap_printed(text))
    value = evaluate(body)
    _check_nested_numbers(value, text)
    return _as_lists(value)


def _check_nested_numbers(value: Any, text: str, depth: int = 0) -> None:
    if isinstance(value, (list, tuple)):
        for item in value:
            _check_nested_numbers(item, text, depth + 1)
        lengths = {len(v) if isinstance(v, (list, tuple)) else -1 for v in value}
        if len(lengths) > 1:
            raise AnswerError(f"The rows of {_quote(text)} have different lengths; a tensor is rectangular.")
        return
    if not isinstance(value, (int, float, bool)):
        raise AnswerError(f"{_quote(text)} holds something that is not a number. {expected_form('tensor')}")


def _as_lists(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_as_lists(v) for v in value]
    return value


_NO_ERROR = {"no error", "none", "no", "nothing", "ok", "no exception", "runs", "works", "no-error", "noerror",
             "it works", "no errors", "succeeds"}


# "RuntimeError: view size is not compatible…", "RuntimeError(...)", "raises RuntimeError": the class is the answer.
_ERROR_WITH_MESSAGE = re.compile(r"^(?:it\s+)?(?:raises\s+|raise\s+)?([A-Za-z_][\w.]*)\s*(?::|\(|$)(.*)$", re.DOTALL)


def parse_error(text: str) -> str:
    key = " ".join(text.strip().strip(".!'\"`").split()).lower()
    if key in _NO_ERROR:
        return "no error"
    name = text.strip().strip("'\"`").rstrip(":").strip()
    if (m := _ERROR_WITH_MESSAGE.match(name)) and m.group(1)[:1].isupper():
        name = m.group(1)
    if not re.fullmatch(r"[A-Za-z_][\w.]*", name):
        raise AnswerError(f"{_quote(text)} is not an exception name. {expected_form('error')}")
    return name.rsplit(".", 1)[-1]


def parse_choice(text: str, options: tuple[str, ...]) -> int:
    labelled = re.match(r"^\(?([a-zA-Z])[).:]\s", text.strip())  # "b) a copy", as the options are shown
    key = labelled.group(1) if labelled else text.strip().strip(".)('\"`").strip()
    lowered = key.lower()
    if len(lowered) == 1 and "a" <= lowered <= "z":
        index = ord(lowered) - ord("a")
    elif lowered.isdigit():
        index = int(lowered) - 1
    else:
        matches = [i for i, o in enumerate(options) if o.strip().lower() == lowered]
        if not matches:
            raise AnswerError(f"Pick one of the options by its letter (a–{option_letter(len(options) - 1)}).")
        index = matches[0]
    if not 0 <= index < len(options):
        raise AnswerError(f"There are only {len(options)} options (a–{option_letter(len(options) - 1)}).")
    return index


_JOINING_WORDS = {"and", "plus", "also", "both"}


def parse_names(text: str) -> frozenset[str]:
    body = text.strip()
    body = re.sub(r"^(?:odict_keys|dict_keys|set|frozenset|list|tuple)\s*\((.*)\)$", r"\1", body, flags=re.DOTALL)
    body = body.strip("[]{}() \n\t")
    if body.lower() in ("", "none", "nothing", "empty"):
        return frozenset()
    # "a and b", "a, b & c": joining words are not names (no Python name is called `and`)
    names = [n.strip().strip("'\"`") for n in re.split(r"[,\s;&+]+", body)]
    names = [n for n in names if n and n.lower() not in _JOINING_WORDS]
    bad = [n for n in names if not re.fullmatch(r"[\w.\-\[\]:]+", n)]
    if bad:
        raise AnswerError(f"{_quote(bad[0])} is not a name. {expected_form('names')}")
    return frozenset(names)


def parse_text(text: str) -> str:
    return normalise_text(text)


def normalise_text(text: str) -> str:
    return " ".join(text.strip().strip("'\"`").split())


def parse_value(text: str) -> Any:
    return evaluate(text)


_PARSERS: dict[str, Callable[..., Any]] = {
    "shape": parse_dims,
    "stride": parse_dims,
    "dtype": parse_dtype,
    "device": parse_device,
    "bool": parse_bool,
    "int": parse_int,
    "float": parse_float,
    "tensor": parse_tensor,
    "error": parse_error,
    "choice": parse_choice,
    "names": parse_names,
    "text": parse_text,
    "value": parse_value,
    "line": lambda text, options=(): _parse_line(text, options),
}


def _parse_line(text: str, options: tuple[str, ...]) -> Any:
    """A first-divergence drill's answer: a line of the code, or a stage (``judge/divergence.py``)."""
    from tutor.judge.divergence import LineAnswerError, parse_line

    try:
        return parse_line(text, options)
    except LineAnswerError as exc:
        raise AnswerError(str(exc)) from None
