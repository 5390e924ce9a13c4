"""The review screen: what spaced review says is due, opened one item at a time."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Header, OptionList, Static
from textual.widgets.option_list import Option

from tutor.app.widgets.footer import key_footer
from tutor.progress.review import DueItem
from tutor.safe_text import inert
from tutor.tutoring.review_text import due_kind, due_summary, due_title, due_when

WEAK_SPOTS_LISTED = 8


class DueOption(Option):
    """A due item in the list; it carries the item itself, not an id to parse back."""

    def __init__(self, label: Text, due: DueItem):
        super().__init__(label)
        self.due = due


class WeakSpotOption(Option):
    """A drill of "practise my weak spots": another drill on a mechanism where a misconception showed."""

    def __init__(self, label: Text, module: str, drill: str):
        super().__init__(label)
        self.module = module
        self.drill = drill


class ReviewScreen(Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", tooltip="back to the map"),
                Binding("enter", "open", "Review it", tooltip="open the highlighted item; it is rated by how you do")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="review-summary")
        yield OptionList(id="due")
        yield Static("", id="weak-summary")
        yield OptionList(id="weak-spots")
        yield key_footer()

    def on_mount(self) -> None:
        self.refresh_queue()

    def on_screen_resume(self) -> None:
        self.refresh_queue()

    def refresh_queue(self) -> None:
        session = self.app.session
        due = [d for d in session.review.due() if session.module(d.module) is not None]
        listing = self.query_one("#due", OptionList)
        listing.clear_options()
        for item in due:
            slot = session.slot(item.module)
            label = Text.assemble((f"{item.module} ", "bold"), inert(slot.title), f" — {due_kind(item)}: ",
                                  (due_title(session.course, item), "italic"), (f"  {due_when(item.due)}", "dim"))
            listing.add_option(DueOption(label, item))
        summary = self.query_one("#review-summary", Static)
        if due:
            summary.update(Text(f"{due_summary(len(due))}. Enter opens the highlighted one; it is rated by how you "
                                "do, then rescheduled."))
            listing.highlighted = 0  # the first Enter opens the first item
            listing.focus()
        else:
            upcoming = session.review.upcoming()
            later = f" The next one is due {upcoming[0].due:%Y-%m-%d %H:%M} UTC." if upcoming else ""
            summary.update(Text("Nothing is due for review now." + later +
                                " Missed drills and self-check questions come back here."))
        self._refresh_weak_spots(focus=not due)

    def _refresh_weak_spots(self, focus: bool) -> None:
        """"Practise my weak spots", beside "due today": drills on the mechanisms whose misconceptions
        still show (tutor/progress/mastery.py), each opened like any drill."""
        session = self.app.session
        listing = self.query_one("#weak-spots", OptionList)
        listing.clear_options()
        titles = {(m.id, d.id): d.title for m in session.course.modules() for d in m.drills}
        spots = [key for key in session.weak_spots() if key in titles][:WEAK_SPOTS_LISTED]
        for module_id, drill_id in spots:
            label = Text.assemble((f"{module_id} ", "bold"), ("drill: ", ""),
                                  (inert(titles[(module_id, drill_id)]), "italic"))
            listing.add_option(WeakSpotOption(label, module_id, drill_id))
        self.query_one("#weak-summary", Static).update(Text(
            "Practise my weak spots: drills on mechanisms where your answers showed a misconception."
            if spots else "Practise my weak spots: nothing yet (no misconception of yours is still showing)."))
        listing.display = bool(spots)
        if spots and focus:
            listing.highlighted = 0
            listing.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._open(event.option)

    def action_open(self) -> None:
        focused = self.focused if isinstance(self.focused, OptionList) else self.query_one("#due", OptionList)
        self._open(focused.highlighted_option)

    def _open(self, option: Option | None) -> None:
        if isinstance(option, WeakSpotOption):
            self.app.open_item(option.module, option.drill)
            return
        if not isinstance(option, DueOption):
            return
        module_id, item = option.due.module, option.due.item
        module = self.app.session.module(module_id)
        if module.drill(item) is not None:
            self.app.open_item(module_id, item)
        else:
            index = next((i for i, c in enumerate(module.self_checks) if c.id == item), 0)
            self.app.open_self_check(module_id, index)
