"""The in-app Python editor: TextArea.code_editor, with the habits of a code editor.

Enter keeps the line's indentation and adds a level after a line ending in ``:`` (one
less after ``return``/``pass``/``raise``/``break``/``continue``); Backspace inside the
indentation removes a whole level; Home goes to the first non-space, then to column 0
(Textual's smart Home). Tab leaves the editor like every other field (so a screen can be
read from the keyboard: TextArea would keep Tab); ctrl+] indents the line or selection.
PageDown/PageUp move through the file, and past its last (first) line scroll the page.
"""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.geometry import Region
from textual.widgets import TextArea
from textual.strip import Strip
from textual.widgets.text_area import Selection

from tutor.safe_text import inert

INDENT = 4
DEDENT_AFTER = ("return", "pass", "raise", "break", "continue")
EDITOR_KEYS = ("Tab leaves the editor · ctrl+] indents, Backspace in the indentation dedents · "
               "ctrl+a selects all · ctrl+z undoes")


def _has_python() -> bool:
    """Highlighting needs tree-sitter's Python grammar (a dependency); without it the editor still edits."""
    try:
        import tree_sitter_python  # noqa: F401
    except ImportError:  # pragma: no cover - installed with the app
        return False
    return True


def next_line_indent(line_before_cursor: str) -> str:
    """The indentation Enter gives the new line, from the text left of the cursor."""
    stripped = line_before_cursor.rstrip()
    indent = len(line_before_cursor) - len(line_before_cursor.lstrip(" "))
    if stripped.endswith(":") and not stripped.lstrip().startswith("#"):
        indent += INDENT
    elif stripped.lstrip().split(" ", 1)[0] in DEDENT_AFTER:
        indent = max(indent - INDENT, 0)
    return " " * indent


class CodeEditor(TextArea):
    BINDINGS = [
        Binding("ctrl+a", "select_all", "Select all", show=False, tooltip="select all (ctrl+z undo, ctrl+y redo)"),
        Binding("ctrl+right_square_bracket", "indent", "Indent", show=False,
                tooltip="indent the line or the selection (Backspace in the indentation dedents; Enter keeps "
                        "the indentation, one level more after a `:`)"),
    ]

    @classmethod
    def python(cls, text: str = "", **kwargs) -> "CodeEditor":
        editor = cls.code_editor(text, language="python" if _has_python() else None, tab_behavior="focus",
                                 **kwargs)
        editor.indent_width = INDENT
        return editor

    def render_line(self, y: int) -> Strip:
        """The line as drawn, made inert: the text stays the pack's or the learner's own (it is what
        runs), but a control character in it (Textual passes C1's CSI, U+009B, and bidi overrides)
        reaches the terminal as a visible mark, at most as wide as the line was."""
        strip = super().render_line(y)
        if all(inert(segment.text) == segment.text for segment in strip):
            return strip
        shown = Strip([segment._replace(text=inert(segment.text)) for segment in strip])
        return shown.crop(0, strip.cell_length)

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter" and not self.read_only:
            event.stop()
            event.prevent_default()
            row, column = self.cursor_location
            start, end = self.selection
            indent = next_line_indent(self.document[row][:column])
            self._replace_via_keyboard("\n" + indent, start, end)
            return
        await super()._on_key(event)

    def action_delete_left(self) -> None:
        """Inside the indentation, Backspace removes back to the previous indent stop."""
        row, column = self.cursor_location
        before = self.document[row][:column]
        if self.selection.is_empty and column and not before.strip(" ") and not self.read_only:
            width = (column - 1) % INDENT + 1
            self._replace_via_keyboard("", (row, column - width), (row, column))
            return
        super().action_delete_left()

    def action_indent(self) -> None:
        """Indent the cursor's line, or every line of the selection, by one level."""
        if self.read_only:
            return
        start, end = sorted(self.selection)
        for row in range(start[0], end[0] + 1):
            self.insert(" " * INDENT, (row, 0))
        self.selection = Selection((start[0], start[1] + INDENT), (end[0], end[1] + INDENT))

    def edit(self, edit):
        """Typing with the editor scrolled out of the page's view (a report is read below it) brings the
        cursor's line back into view (not ``load_text``: a screen opening at its top stays there)."""
        result = super().edit(edit)
        if self.has_focus:
            self.call_after_refresh(self._reveal_cursor)
        return result

    def _reveal_cursor(self) -> None:
        page = self._page()
        if page is None or not self.is_attached or self.parent is not page:
            return
        row_in_view = max(self.cursor_location[0] - int(self.scroll_offset.y), 0) + self.gutter.top
        line = Region(0, self.virtual_region.y + row_in_view, 1, 1).grow((1, 0, 1, 0))
        page.scroll_to_region(line, animate=False, immediate=True)

    def _page(self) -> ScrollableContainer | None:
        return next((a for a in self.ancestors if isinstance(a, ScrollableContainer)), None)

    def action_cursor_page_down(self) -> None:
        page = self._page()
        if self.cursor_location[0] >= self.document.line_count - 1 and page is not None:
            page.scroll_page_down()
            return
        super().action_cursor_page_down()

    def action_cursor_page_up(self) -> None:
        page = self._page()
        if self.cursor_location[0] == 0 and page is not None:
            page.scroll_page_up()
            return
        super().action_cursor_page_up()
