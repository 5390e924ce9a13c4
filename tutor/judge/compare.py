"""Compare a prediction with an observation and name the first divergence."""

from __future__ import annotations

import math
from typing import Any

from tutor.judge.text_match import TextMatch, text_matches
from tutor.judge.kinds import option_label
from tutor.wording import count

DEFAULT_REL_TOL = 1e-3
DEFAULT_ABS_TOL = 1e-6


def numbers_match(predicted: float, observed: float, tolerance: float | None) -> bool:
    if math.isnan(observed) or math.isnan(predicted):
        return math.isnan(observed) and math.isnan(predicted)
    if math.isinf(observed) or math.isinf(predicted):
        return predicted == observed
    if tolerance is not None:
        return abs(predicted - observed) <= tolerance
    return math.isclose(predicted, observed, rel_tol=DEFAULT_REL_TOL, abs_tol=DEFAULT_ABS_TOL)


def render(kind: str, value: Any, options: tuple[str, ...] = ()) -> str:
    """Show a canonical value the way a learner would type it."""
    if kind in ("shape", "stride"):
        return "(" + ", ".join(str(d) for d in value) + ("," if len(value) == 1 else "") + ")"
    if kind == "bool":
        return "yes" if value else "no"
    if kind == "choice":
        return option_label(value, options[value]) if 0 <= value < len(options) else str(value)
    if kind == "names":
        return ", ".join(sorted(value)) if value else "(none)"
    if kind == "float":
        return _number(value)
    if kind == "tensor":
        return _nested(value)
    if kind == "value":
        return repr(value)
    return str(value)


def _number(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value.is_integer() and abs(value) < 1e16:
            return f"{int(value)}."  # torch's spelling of a whole float, and every digit kept
        return f"{value:.6g}"
    return str(value)


def _nested(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_nested(v) for v in value) + "]"
    return _number(value)


def _shape_of(value: Any) -> tuple[int, ...]:
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)


def _flat(value: Any, prefix: tuple[int, ...] = ()):
    if isinstance(value, list):
        for i, v in enumerate(value):
            yield from _flat(v, prefix + (i,))
    else:
        yield prefix, value


def compare(kind: str, predicted: Any, observed: Any, tolerance: float | None = None,
            options: tuple[str, ...] = (), match: TextMatch = TextMatch()) -> str | None:
    """``None`` when the prediction matches, else the first divergence in words."""
    if kind in ("shape", "stride"):
        if len(predicted) != len(observed):
            return (f"{kind}, number of dimensions: you said {len(predicted)} "
                    f"({render(kind, predicted)}), observed {len(observed)} ({render(kind, observed)})")
        for dim, (p, o) in enumerate(zip(predicted, observed)):
            if p != o:
                return f"{kind}, dim {dim}: you said {p}, observed {o}"
        return None
    if kind == "float":
        if numbers_match(predicted, observed, tolerance):
            return None
        return f"value: you said {_number(predicted)}, observed {_number(observed)}"
    if kind == "tensor":
        p_shape, o_shape = _shape_of(predicted), _shape_of(observed)
        if p_shape != o_shape:
            return f"shape: your values form {render('shape', p_shape)}, observed {render('shape', o_shape)}"
        for (index, p), (_, o) in zip(_flat(predicted), _flat(observed)):
            if isinstance(o, bool) or isinstance(p, bool):
                same = bool(p) == bool(o) and (isinstance(p, (bool, int)) and p in (0, 1, True, False))
            else:
                same = numbers_match(float(p), float(o), tolerance)
            if not same:
                where = "[" + ", ".join(map(str, index)) + "]" if index else "the value"
                return f"value at {where}: you said {_number(p)}, observed {_number(o)}"
        return None
    if kind == "names":
        missing, extra = sorted(observed - predicted), sorted(predicted - observed)
        if not missing and not extra:
            return None
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if extra:
            parts.append(f"you named {', '.join(extra)}, which {'is' if len(extra) == 1 else 'are'} not there")
        return "names: " + "; ".join(parts)
    if kind == "error":
        if str(predicted).lower() == str(observed).lower():
            return None
        return f"exception: you said {predicted}, observed {observed}"
    if kind == "text":
        if text_matches(str(predicted), str(observed), match):
            return None
        how = "" if match.mode == "case-insensitive" else f" ({match.describe()})"
        return f"text: you said {predicted}, observed {observed}{how}"
    if kind == "value":
        return _compare_values(predicted, observed, "value", tolerance)
    if predicted == observed:
        return None
    return f"{kind}: you said {render(kind, predicted, options)}, observed {render(kind, observed, options)}"


def _compare_values(p: Any, o: Any, where: str, tolerance: float | None) -> str | None:
    if isinstance(o, (list, tuple)) and isinstance(p, (list, tuple)):
        if len(p) != len(o):
            return f"{where}: you said {count(len(p), 'item')}, observed {len(o)}"
        for i, (pi, oi) in enumerate(zip(p, o)):
            if (d := _compare_values(pi, oi, f"{where}[{i}]", tolerance)):
                return d
        return None
    if isinstance(o, dict) and isinstance(p, dict):
        if set(map(str, p)) != set(o):
            return f"{where}: keys differ (you said {sorted(map(str, p))}, observed {sorted(o)})"
        for k in o:
            pk = next(key for key in p if str(key) == k)
            if (d := _compare_values(p[pk], o[k], f"{where}[{k!r}]", tolerance)):
                return d
        return None
    numeric = (int, float)
    if isinstance(o, numeric) and isinstance(p, numeric) and not isinstance(o, bool) and not isinstance(p, bool):
        return None if numbers_match(float(p), float(o), tolerance) else f"{where}: you said {p!r}, observed {o!r}"
    if type(p) is type(o) and p == o:
        return None
    if isinstance(o, set) and isinstance(p, set) and p == o:
        return None
    return f"{where}: you said {p!r}, observed {o!r}"
