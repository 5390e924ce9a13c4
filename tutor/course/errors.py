"""Errors that point an author at the exact place in a lesson file."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LessonError:
    """One problem in one file, at ``line:column`` (1-based), in ``field``."""

    file: str
    line: int
    column: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class LessonFileError(Exception):
    """Raised when a file cannot be read as YAML at all; carries the errors found."""

    def __init__(self, errors: list[LessonError]):
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors
