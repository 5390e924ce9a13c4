"""Reading the marked YAML tree: every value checked, every problem kept with its file:line:column.

The reader never raises for content: it records a :class:`LessonError` at the
mark ``yaml_source.py`` kept for the key or item, and returns a harmless default,
so one pass reports every problem of a file. The module schema (``fields.py``)
and the course file reader (``loader.py``) are both written on top of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tutor.course.errors import LessonError
from tutor.course.yaml_source import Mark, MarkedDict, MarkedList

ID_RULE = "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit, and no '..'"


@dataclass
class Reader:
    """Walks the marked YAML tree, recording errors instead of raising."""

    filename: str
    errors: list[LessonError] = field(default_factory=list)
    # A drill with variants: the instance its code is compiled as (``{{name}}`` replaced), see variants.py
    instance: tuple = ()

    def error(self, mark: Mark, path: str, message: str) -> None:
        self.errors.append(LessonError(self.filename, mark[0], mark[1], path, message))

    def mapping(self, data: Any, path: str, mark: Mark, required: set[str], optional: set[str]) -> MarkedDict | None:
        if not isinstance(data, MarkedDict):
            self.error(mark, path, f"expected a mapping, got {type_name(data)}")
            return None
        for key in data:
            if key not in required and key not in optional:
                allowed = ", ".join(sorted(required | optional))
                self.error(data.key_marks[key], join(path, key), f"unknown key (allowed: {allowed})")
        for key in sorted(required - set(data)):
            self.error(data.mark, join(path, key), "required key is missing")
        return data

    def key_mark(self, data: MarkedDict, key: str) -> Mark:
        return data.key_marks.get(key, data.mark)

    def text(self, data: MarkedDict, key: str, path: str, default: str | None = None) -> str:
        if key not in data:
            return default if default is not None else ""
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.error(self.key_mark(data, key), join(path, key), f"expected text, got {type_name(value)}"
                       + unquoted_colon_note(value))
            return ""
        value = str(value)
        if not value.strip() and default is None:
            self.error(self.key_mark(data, key), join(path, key), "must not be empty")
        return value

    def identifier(self, data: MarkedDict, key: str, path: str) -> str:
        """Required text that must also be a safe id (see ``schema.SAFE_ID``)."""
        from tutor.course.schema import is_safe_id

        value = self.text(data, key, path)
        if value and not is_safe_id(value):
            self.error(self.key_mark(data, key), join(path, key), f"id {value[:80]!r} is not allowed: {ID_RULE}")
            return ""
        return value

    def sequence(self, data: MarkedDict, key: str, path: str) -> MarkedList:
        value = data.get(key)
        if value is None:
            return empty_list()
        if not isinstance(value, MarkedList):
            self.error(self.key_mark(data, key), join(path, key), f"expected a list, got {type_name(value)}")
            return empty_list()
        return value

    def text_list(self, data: MarkedDict, key: str, path: str) -> tuple[str, ...]:
        items = self.sequence(data, key, path)
        out = []
        for i, item in enumerate(items):
            if isinstance(item, bool) or not isinstance(item, (str, int, float)) or not str(item).strip():
                self.error(items.item_marks[i], f"{join(path, key)}[{i}]",
                           "expected non-empty text" + unquoted_colon_note(item))
            else:
                out.append(str(item))
        return tuple(out)

    def code(self, data: MarkedDict, key: str, path: str, mode: str = "exec") -> str:
        source = self.text(data, key, path, default="")
        if source.strip():
            try:
                compile(self._rendered(source), f"<{key}>", mode)
            except SyntaxError as exc:
                line, col = self.key_mark(data, key)
                # A block scalar's text starts on the line after its key.
                offset = (exc.lineno or 1) if "\n" in source.rstrip("\n") or source.endswith("\n") else 0
                self.errors.append(
                    LessonError(self.filename, line + offset, col, join(path, key), f"Python syntax error: {exc.msg}")
                )
        return source

    def _rendered(self, source: str) -> str:
        if not self.instance:
            return source
        from tutor.course.variants import render  # variants.py reads with this class

        return render(source, self.instance)

    def number(self, data: MarkedDict, key: str, path: str, low: float, high: float, what: str) -> float | None:
        """A number in ``low < x <= high`` (``None`` when absent or wrong, the error recorded)."""
        if key not in data:
            return None
        raw = data[key]
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not low < raw <= high:
            self.error(self.key_mark(data, key), join(path, key), f"expected {what}")
            return None
        return float(raw)


def unquoted_colon_note(value: Any) -> str:
    """Why a text became a mapping: YAML reads ``- band: use …`` as ``{band: "use …"}``."""
    if isinstance(value, MarkedDict) and len(value) == 1:
        key, inner = next(iter(value.items()))
        if isinstance(inner, (str, int, float)) and not isinstance(inner, bool):
            shown = f"{key}: {inner}"
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            return (f" — YAML read the unquoted text {shown!r} as a mapping because of the ': ' in it; "
                    f"quote the whole text (\"{shown}\") or use a block scalar (|)")
        return " — YAML read it as a mapping because of a ': ' in it; quote the whole text"
    return ""


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def type_name(value: Any) -> str:
    if isinstance(value, MarkedDict):
        return "a mapping"
    if isinstance(value, MarkedList):
        return "a list"
    if value is None:
        return "nothing"
    return type(value).__name__


def empty_list() -> MarkedList:
    items = MarkedList()
    items.item_marks = []
    return items
