"""What the drill and exercise screens share: moving through a module and tiered hints."""

from __future__ import annotations

from rich.text import Text
from textual.screen import Screen
from textual.widgets import Static

from tutor.safe_text import inert


class LessonScreen(Screen):
    """A screen showing one drill of a module; subclasses set ``module_id`` and ``drill``."""

    module_id: str
    hints_shown: int = 0

    def action_hint(self) -> None:
        hints = self.drill.hints
        if self.hints_shown >= len(hints):
            self.notify("No more hints here: run it and read the explanation.", timeout=4)
            return
        self.hints_shown += 1
        text = Text()
        for i, hint in enumerate(hints[: self.hints_shown], start=1):
            text.append(f"Hint {i}/{len(hints)}: ", style="bold")
            text.append(inert(hint) + "\n")
        widget = self.query_one("#hints", Static)
        widget.update(text)
        widget.add_class("-shown")
        widget.scroll_visible()

    def action_next(self) -> None:
        following = self.app.session.next_after(self.module_id, self.drill.id)
        if following is None:
            self.app.back_to_map()
        else:
            self.app.open_item(self.module_id, following)

    def action_previous(self) -> None:
        before = self.app.session.previous_before(self.module_id, self.drill.id)
        if before is not None:
            self.app.open_item(self.module_id, before)

    def action_map(self) -> None:
        self.app.back_to_map()
