"""YAML reading that keeps positions and refuses what lessons never need.

PyYAML's safe loader is used only to compose nodes and to type scalars; we build
the containers ourselves so that every key and item keeps its line and column,
duplicate keys are errors (PyYAML silently keeps the last), and anchors/aliases
(the "billion laughs" expansion) and custom tags are refused outright.
"""

from __future__ import annotations

from typing import Any

import yaml

from tutor.course.errors import LessonError, LessonFileError

MAX_FILE_BYTES = 1_000_000
MAX_DEPTH = 32
MAX_NODES = 200_000

Mark = tuple[int, int]  # (line, column), 1-based


class MarkedDict(dict):
    """A mapping that remembers where it and each of its keys stood."""

    mark: Mark = (1, 1)
    key_marks: dict[str, Mark]


class MarkedList(list):
    """A sequence that remembers where it and each of its items stood."""

    mark: Mark = (1, 1)
    item_marks: list[Mark]


class _NoAliasLoader(yaml.SafeLoader):
    def compose_node(self, parent, index):  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "anchors and aliases are not allowed in lesson files", event.start_mark
            )
        return super().compose_node(parent, index)


_SAFE_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
}


def _mark(node: yaml.Node) -> Mark:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def load_yaml(text: str, filename: str) -> Any:
    """Parse ``text``; raise :class:`LessonFileError` with file:line:column on any problem."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise LessonFileError(
            [LessonError(filename, 1, 1, "", f"file is larger than {MAX_FILE_BYTES:,} bytes; split the module")]
        )
    loader = _NoAliasLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise LessonFileError([LessonError(filename, 1, 1, "", "file is empty")])
        counter = [0]
        return _build(node, loader, filename, 0, counter)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise LessonFileError([LessonError(filename, line, column, "", f"invalid YAML: {problem}")]) from None
    except yaml.YAMLError as exc:  # e.g. a reader error on a control character
        raise LessonFileError([LessonError(filename, 1, 1, "", f"invalid YAML: {exc}")]) from None
    finally:
        loader.dispose()


def _build(node: yaml.Node, loader: yaml.SafeLoader, filename: str, depth: int, counter: list[int]) -> Any:
    counter[0] += 1
    line, column = _mark(node)
    if counter[0] > MAX_NODES:
        raise LessonFileError([LessonError(filename, line, column, "", "too many YAML nodes; split the module")])
    if depth > MAX_DEPTH:
        raise LessonFileError([LessonError(filename, line, column, "", f"nesting deeper than {MAX_DEPTH} levels")])
    if node.tag not in _SAFE_TAGS:
        raise LessonFileError([LessonError(filename, line, column, "", f"tag {node.tag!r} is not allowed")])
    if isinstance(node, yaml.MappingNode):
        result = MarkedDict()
        result.mark = (line, column)
        result.key_marks = {}
        for key_node, value_node in node.value:
            key_line, key_col = _mark(key_node)
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                raise LessonFileError([LessonError(filename, key_line, key_col, "", "keys must be plain names")])
            key = str(loader.construct_object(key_node, deep=True))
            if key in result:
                first = result.key_marks[key]
                raise LessonFileError(
                    [
                        LessonError(
                            filename, key_line, key_col, key, f"duplicate key (first defined at line {first[0]})"
                        )
                    ]
                )
            result.key_marks[key] = (key_line, key_col)
            result[key] = _build(value_node, loader, filename, depth + 1, counter)
        return result
    if isinstance(node, yaml.SequenceNode):
        items = MarkedList()
        items.mark = (line, column)
        items.item_marks = []
        for item in node.value:
            items.item_marks.append(_mark(item))
            items.append(_build(item, loader, filename, depth + 1, counter))
        return items
    return loader.construct_object(node, deep=True)
