"""YAML reading that keeps positions and refuses what lessons never need.

PyYAML's safe loader is used only to compose nodes and to type scalars; we build
the containers ourselves so that every key and item keeps its line and column,
duplicate keys are errors (PyYAML silently keeps the last), and anchors/aliases
(the "billion laughs" expansion) and custom tags are refused outright.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tutor.course.errors import LessonError, LessonFileError

if TYPE_CHECKING:
    import yaml

MAX_FILE_BYTES = 1_000_000
MAX_DEPTH = 32
MAX_NODES = 20_000  # the largest module of the course has about 1,300

Mark = tuple[int, int]  # (line, column), 1-based


class MarkedDict(dict):
    """A mapping that remembers where it and each of its keys stood."""

    mark: Mark = (1, 1)
    key_marks: dict[str, Mark]


class MarkedList(list):
    """A sequence that remembers where it and each of its items stood."""

    mark: Mark = (1, 1)
    item_marks: list[Mark]



def _yaml():
    """PyYAML, imported when a file is parsed: a launch served from the parsed-course cache never is."""
    import yaml

    return yaml


def _loader(text: str):
    yaml = _yaml()  # the C parser (libyaml) when PyYAML has it: about ten times faster, same marks
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)

_SAFE_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
}

def load_yaml(text: str, filename: str) -> Any:
    """Parse ``text``; raise :class:`LessonFileError` with file:line:column on any problem.

    The containers are built from the parser's event stream, iteratively and with
    the depth and node caps applied as each event arrives: a hostile file (a flow
    list 2,000 deep, a megabyte of tiny nodes) is refused at the event where it
    crosses a cap, before anything large is built and without recursion.
    """
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise LessonFileError(
            [LessonError(filename, 1, 1, "", f"file is larger than {MAX_FILE_BYTES:,} bytes; split the module")]
        )
    yaml = _yaml()
    loader = _loader(text)
    try:
        return _build_from_events(loader, filename)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise LessonFileError([LessonError(filename, line, column, "", f"invalid YAML: {problem}"
                                           + _yaml_hint(problem))]) from None
    except yaml.YAMLError as exc:  # e.g. a reader error on a control character
        raise LessonFileError([LessonError(filename, 1, 1, "", f"invalid YAML: {exc}")]) from None
    finally:
        loader.dispose()


def _refuse(filename: str, mark: Mark, message: str, key: str = "") -> LessonFileError:
    return LessonFileError([LessonError(filename, mark[0], mark[1], key, message)])


def _event_mark(event: yaml.Event) -> Mark:
    return (event.start_mark.line + 1, event.start_mark.column + 1)


def _build_from_events(loader, filename: str) -> Any:
    yaml = _yaml()
    stack: list[list] = []  # open containers: [container, pending key or _NO_KEY, pending key mark]
    nodes = 0
    root: Any = _NO_KEY
    documents = 0
    while True:
        event = loader.get_event()
        if isinstance(event, yaml.StreamEndEvent):
            break
        if isinstance(event, (yaml.StreamStartEvent, yaml.DocumentEndEvent)):
            continue
        if isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise _refuse(filename, _event_mark(event), "a lesson file holds one YAML document")
            continue
        mark = _event_mark(event)
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise _refuse(filename, mark, "invalid YAML: anchors and aliases are not allowed in lesson files")
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            finished = stack.pop()[0]  # already attached to its parent when it started
            if not stack:
                root = finished
            continue
        else:
            nodes += 1
            if nodes > MAX_NODES:
                raise _refuse(filename, mark, "too many YAML nodes; split the module")
            if isinstance(event, yaml.ScalarEvent):
                value = _scalar(loader, event, filename, mark)
            else:
                kind = yaml.MappingNode if isinstance(event, yaml.MappingStartEvent) else yaml.SequenceNode
                tag = event.tag if event.tag not in (None, "!") else loader.resolve(kind, None, event.implicit)
                if tag not in _SAFE_TAGS:
                    raise _refuse(filename, mark, f"tag {tag!r} is not allowed")
                if len(stack) >= MAX_DEPTH:
                    raise _refuse(filename, mark, f"nesting deeper than {MAX_DEPTH} levels")
                if kind is yaml.MappingNode:
                    container: Any = MarkedDict()
                    container.key_marks = {}
                else:
                    container = MarkedList()
                    container.item_marks = []
                container.mark = mark
                _attach(stack, container, mark, filename, is_container=True)
                stack.append([container, _NO_KEY, mark])
                continue
        if not stack:
            root = value
            continue
        _attach(stack, value, mark, filename)
    if root is _NO_KEY or root is None:
        raise _refuse(filename, (1, 1), "file is empty")
    return root


_NO_KEY = object()
_STR = "tag:yaml.org,2002:str"


def _scalar(loader, event: yaml.ScalarEvent, filename: str, mark: Mark) -> Any:
    yaml = _yaml()
    tag = event.tag if event.tag not in (None, "!") else loader.resolve(yaml.ScalarNode, event.value, event.implicit)
    if tag == _STR:
        return event.value
    if tag not in _SAFE_TAGS:
        raise _refuse(filename, mark, f"tag {tag!r} is not allowed")
    node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
    return loader.construct_object(node, deep=True)


def _attach(stack: list[list], value: Any, mark: Mark, filename: str, is_container: bool = False) -> None:
    """Put ``value`` into the innermost open container (as a key, a key's value or an item)."""
    if not stack:
        return
    top = stack[-1]
    container = top[0]
    if isinstance(container, MarkedList):
        container.item_marks.append(mark)
        container.append(value)
        return
    if top[1] is _NO_KEY:  # this value is a key
        if is_container or isinstance(value, (MarkedDict, MarkedList)):
            raise _refuse(filename, mark, "keys must be plain names")
        key = str(value)
        if key == "<<":
            raise _refuse(filename, mark, "keys must be plain names")
        if key in container:
            first = container.key_marks[key]
            raise _refuse(filename, mark, f"duplicate key (first defined at line {first[0]})", key)
        top[1], top[2] = key, mark
        return
    key = top[1]
    container.key_marks[key] = top[2]
    container[key] = value
    top[1] = _NO_KEY


# PyYAML's messages name the parser's state, not the author's mistake.
_YAML_HINTS = {
    "expected <block end>": "a line is indented differently from the keys beside it (keys of one mapping "
                            "line up; a list item's keys line up under the first one after '- ')",
    "did not find expected '-' indicator": "a line is indented differently from the list items beside it "
                                           "(keys of one item line up under the first one after '- ')",
    "did not find expected key": "a line is indented differently from the keys beside it, or a quoted "
                                 "string has text after its closing quote",
    "mapping values are not allowed": "a value contains ': ' (a colon and a space): quote it, or use "
                                           "a block scalar (key: | and the text on the next lines, indented)",
    "found character '\\t'": "a tab indents this line: YAML indents with spaces only",
    "found character '\t'": "a tab indents this line: YAML indents with spaces only",
}


def _yaml_hint(problem: str) -> str:
    for fragment, hint in _YAML_HINTS.items():
        if fragment in problem:
            return f" — hint: {hint}"
    return ""

