"""The drill's answer form: one box per ask, and how sure the learner is."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input, RadioButton, RadioSet, Static

from tutor.app.widgets.page import reveal


class AnswerInput(Input):
    """The answer box of one ask; it knows which ask it answers and where its problem is shown."""

    def __init__(self, index: int, key: str, **kwargs):
        super().__init__(**kwargs)
        self.index = index
        self.key = key
        self.problem = Static("", classes="answer-problem")  # why this answer cannot be read, under the box

    def on_input_changed(self, event: Input.Changed) -> None:
        """Typing into a box scrolled out of view (the report is read below it) brings it back; a value set
        by the screen (answers kept from before) does not scroll the page away from its top."""
        if self.has_focus:
            reveal(self)
        if self.problem.has_class("-shown"):  # "No answer yet" under a box being filled is stale: gone
            self.problem.update("")
            self.problem.remove_class("-shown")


class ConfidenceButton(RadioButton):
    def __init__(self, level: int, label: str, **kwargs):
        super().__init__(label, **kwargs)
        self.level = level


class ConfidenceChoice(RadioSet):
    """How sure the learner is: arrows or Space choose; Enter runs, like everywhere in the form.

    Nothing is chosen until the learner chooses (focusing the row chooses nothing).
    """

    BINDINGS = [
        Binding("enter", "screen.run", "Run", show=False),
        Binding("space", "toggle_button", "Choose", show=False),
        Binding("right,down", "choose(1)", "Surer", show=False),
        Binding("left,up", "choose(-1)", "Less sure", show=False),
    ]

    def action_choose(self, step: int) -> None:
        if self.pressed_button is not None:  # the first arrow chooses the highlighted one
            self.action_next_button() if step > 0 else self.action_previous_button()
        self.action_toggle_button()

    def clear(self) -> None:
        for button in self.query(RadioButton):
            button.value = False
        self._pressed_button = None
