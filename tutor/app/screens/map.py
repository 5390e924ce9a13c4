"""The module map: every module by part, its state, and why a locked one is locked."""

from __future__ import annotations

import sys

from rich.console import Console, ConsoleOptions, Group
from rich.measure import Measurement
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Input, OptionList, Static
from textual.widgets.option_list import Option

from tutor.app.widgets.footer import key_footer
from tutor.course.graph import Status
from tutor.safe_text import inert
from tutor.workspace import Workspace

STATUS_STYLE = {
    Status.DONE: ("✓", "green"),
    Status.TESTED_OUT: ("⤼", "cyan"),
    Status.IN_PROGRESS: ("◐", "yellow"),
    Status.OPEN: ("○", "bold"),
    Status.LOCKED: ("·", "dim"),
    Status.COMING: ("…", "dim italic"),
    Status.BROKEN: ("✗", "red"),
}


def module_line(slot, state) -> HangingLine:
    """A module's line: icon and id first, so a wrapped title and its state ("needs 07", "coming")
    stay indented under the title."""
    icon, style = STATUS_STYLE[state.status]
    label = state.status.value if state.status != Status.LOCKED else state.reason
    return HangingLine(Text.assemble((f"{icon} ", style), (slot.id, "bold")),
                       Text.assemble((inert(slot.title), style), (f"  {label}", "dim")))


class HangingLine:
    """``head``, two spaces, then ``body`` word-wrapped with every further line indented under its start.

    Drawn by hand, not as a two-column ``Table.grid``: the option list renders every option
    several times to measure it, and 38 tables' layout was most of the map's first frame.
    """

    GAP = 2

    def __init__(self, head: Text, body: Text):
        self.head, self.body = head, body
        self._rows: dict[int, list[Text]] = {}  # by width: the list measures and draws each line several times

    def __rich_console__(self, console: Console, options: ConsoleOptions):
        rows = self._rows.get(options.max_width)
        if rows is None:
            indent = self.head.cell_len + self.GAP
            rows = []
            for number, line in enumerate(self.body.wrap(console, max(1, options.max_width - indent), overflow="fold")):
                row = (self.head + " " * self.GAP if number == 0 else Text(" " * indent)) + line
                row.no_wrap, row.end = True, "\n"
                rows.append(row)
            self._rows[options.max_width] = rows
        yield from rows

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        indent = self.head.cell_len + self.GAP
        body = Measurement.get(console, options, self.body)
        return Measurement(indent + body.minimum, indent + body.maximum)


class MapScreen(Screen):
    # Focused as the screen is composed, so the first frame is drawn focused: focusing in on_mount came
    # after that first layout and made Textual restyle and redraw the whole list once more (~20 ms)
    AUTO_FOCUS = "#modules"
    BINDINGS = [
        Binding("enter", "open", "Open", show=True, tooltip="open the highlighted module where you left it"),
        Binding("slash", "search", "Search", tooltip="search modules by number or title"),
        # The search box does not use Down: it hands the learner to the list (the list's own Down moves in it)
        Binding("down", "leave_search", "To the list", show=False, tooltip="from the search box to the list"),
        Binding("t", "test_out", "Test out",
                tooltip="test out of a locked module: each module it skips answers its own questions"),
        Binding("r", "app.review", "Review", tooltip="spaced review: what is due"),
        Binding("i", "app.interview", "Interview",
                tooltip="a timed mock interview over what you have done (or a part of the course), with a debrief"),
        Binding("s", "app.stats", "Stats", tooltip="accuracy, calibration and time"),
        Binding("question_mark", "app.help", "Help", show=False, tooltip="how the tutor works, and every key"),
        Binding("q", "app.quit", "Quit", show=False, tooltip="quit (progress is always saved)"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="map-body"):
            with Vertical(id="map-left"):
                yield Input(placeholder="/ to search modules by number or title", id="search")
                yield OptionList(id="modules")
                weakest = Static(id="weakest")
                weakest.display = False  # shown after the first frame, when the learner has weak spots
                yield weakest
            with VerticalScroll(id="details-scroll"):  # Tab reaches it; arrows and PageDown scroll a long intro
                yield Static(id="details")
        yield key_footer()

    def on_screen_resume(self) -> None:
        """Filled in each time the map comes back, the first time included (once: the option list
        measures every line it is given, so a second fill before the first frame is not free)."""
        self.refresh_map()
        self.app.after_first_frame(self._show_weakest)  # the estimate replays the history: not before the frame

    def _show_weakest(self) -> None:
        """The three weakest mechanisms under the list (hidden while there are none)."""
        lines = self.app.session.weakest_lines()
        weakest = self.query_one("#weakest", Static)
        weakest.display = bool(lines)
        if lines:
            weakest.update(Text.assemble(("Weakest mechanisms\n", "bold"),
                                         "\n".join(inert(line) for line in lines)))

    def action_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_leave_search(self) -> None:
        if self.focused is self.query_one("#search", Input):
            self.query_one("#modules", OptionList).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.refresh_map()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        modules = self.query_one("#modules", OptionList)
        modules.focus()
        option = modules.highlighted_option
        if option is not None and option.id:
            self.app.open_module(option.id)

    def action_test_out(self) -> None:
        option = self.query_one("#modules", OptionList).highlighted_option
        if option is not None and option.id:
            self.app.test_out(option.id)

    def _matches(self, slot) -> bool:
        query = self.query_one("#search", Input).value.strip().lower()
        return not query or query in f"{slot.id} {slot.title}".lower()

    def refresh_map(self) -> None:
        session = self.app.session
        course = session.course
        modules = self.query_one("#modules", OptionList)
        highlighted = modules.highlighted_option.id if modules.highlighted_option else None
        options: list[Option] = []
        for part in course.parts:
            slots = [s for s in course.slots if s.part == part.id and self._matches(s)]
            if not slots:
                continue
            span = f"{slots[0].id}–{slots[-1].id}" if len(slots) > 1 else slots[0].id
            options.append(Option(Text(f"{inert(part.title)} ({span})", style="bold underline"), disabled=True))
            for slot in slots:
                state = session.state(slot.id)
                options.append(Option(module_line(slot, state), id=slot.id))
        orphans = [s for s in course.slots if s.part not in {p.id for p in course.parts}]
        for slot in orphans:
            options.append(Option(Text(f"{slot.id}  {inert(slot.title)}"), id=slot.id))
        modules.clear_options()
        modules.add_options(options)
        shown = {o.id for o in options if o.id}
        opened, self.app.newly_opened = self.app.newly_opened, None
        if opened in shown:  # back from finishing a module: on what it opened, not on the finished one
            target = opened
        else:
            target = highlighted if highlighted in shown else self._first_open(shown)
        if target is not None:
            try:
                modules.highlighted = modules.get_option_index(target)
            except Exception:  # the option vanished (a reloaded course): keep the default
                pass
        self.show_details(target)

    def _first_open(self, shown: set[str]) -> str | None:
        session = self.app.session
        candidates = [s for s in session.course.slots if s.id in shown]
        for slot in candidates:
            if session.state(slot.id).status in (Status.IN_PROGRESS, Status.OPEN):
                return slot.id
        return candidates[0].id if candidates else None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.show_details(event.option.id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.app.open_module(event.option.id)

    def action_open(self) -> None:
        option = self.query_one("#modules", OptionList).highlighted_option
        if option is not None and option.id:
            self.app.open_module(option.id)

    _late_parts_asked = False

    def _show_late_parts(self) -> None:
        self._late_parts_asked = False
        import rich.markdown  # noqa: F401 - show_details finds them loaded from now on
        import tutor.commands.capstone_mine  # noqa: F401

        option = self.query_one("#modules", OptionList).highlighted_option
        self.show_details(option.id if option is not None else None)

    def show_details(self, module_id: str | None) -> None:
        details = self.query_one("#details", Static)
        session = self.app.session
        if module_id is None or session.slot(module_id) is None:
            errors = session.course.errors
            details.update(Text("\n".join(inert(str(e)) for e in errors) or "No modules.", style="red"))
            return
        slot = session.slot(module_id)
        state = session.state(module_id)
        text = Text()
        text.append(f"{slot.id}  {inert(slot.title)}\n", style="bold")
        text.append(f"\n{state.status.value.capitalize()}", style=STATUS_STYLE[state.status][1])
        if state.status == Status.LOCKED:
            text.append(f" — {state.reason}")
            text.append("\nKnow the prerequisites already? Press t to test out.", style="dim")
        text.append("\n")
        if slot.requires:  # each with its state: "needs" above names the ones not done yet, in this order
            parts = [f"{r} {session.state(r).status.value}" if session.slot(r) else r for r in slot.requires]
            text.append(f"Requires: {', '.join(parts)}\n", style="dim")
        if slot.module is not None:
            progress = session.progress.of(slot.id)
            module = slot.module
            answered = progress.self_checks_answered & {c.id for c in module.self_checks}
            text.append(f"\nDrills verified: {len(progress.drills_done)}/{len(module.drills)}\n")
            text.append(f"Self-check answered: {len(answered)}/{len(module.self_checks)}\n")
            footer = Text("\nPress Enter to open.", style="dim") if state.status in (
                Status.OPEN, Status.IN_PROGRESS, Status.DONE) else Text("")
            # The intro's Markdown (pygments, markdown-it: ~100 modules) and the capstone package line (the
            # capstone driver and the sandbox wire) are imported after the first frame, and shown then.
            markdown, capstone = sys.modules.get("rich.markdown"), sys.modules.get("tutor.commands.capstone_mine")
            if markdown is None or capstone is None:
                details.update(Group(text, footer))
                if not self._late_parts_asked:  # once: the highlight may move before they are loaded
                    self._late_parts_asked = True
                    self.app.after_first_frame(self._show_late_parts)
                return
            space = Workspace(self.app.profile_name, session.course.identity)
            package = capstone.package_line(space, module)  # the capstone stages: whose code each is
            if package:
                text.append(inert(package) + "\n")
            if module.intro.strip():
                # hyperlinks=False: no OSC 8 link reaches the terminal (a link there opens outside the app's
                # open_url, which is where a course's links are checked); the address is shown as text
                details.update(Group(text, markdown.Markdown(inert(module.intro.strip()), hyperlinks=False), footer))
                return
            text.append_text(footer)
        elif slot.is_broken:
            text.append("\nThis module's lesson file has errors:\n", style="red")
            for error in slot.errors[:12]:
                text.append(inert(str(error)) + "\n", style="red")
        else:
            text.append("\nThis lesson has not been written yet.", style="dim")
        details.update(text)
