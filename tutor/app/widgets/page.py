"""A screen's scrolling page, which can bring a part of itself into view once that part is laid out.

``scroll_visible`` right after filling or showing a panel scrolls to where the panel *was*: its
new size (and a hidden panel's place) arrive with the next layout, after the CSS class change is
applied. On a short terminal (80x24) that left the answer boxes on screen and the report below.
``Page.reveal`` waits for the layout instead (the screen's layout-refresh signal).
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widget import Widget


class Page(VerticalScroll):
    _pending: tuple[Widget, Widget] | None = None

    def on_mount(self) -> None:
        self.screen.screen_layout_refresh_signal.subscribe(self, self._after_layout)

    def reveal(self, first: Widget, last: Widget | None = None) -> None:
        """After the next layout: ``first`` down to ``last`` in view (their top, when taller than the page).

        The least scroll that shows them, so what fits beside them (the answers, on a tall terminal) stays.
        """
        self._pending = (first, last or first)
        self.screen.refresh(layout=True)  # a layout comes even when nothing else asks for one

    def _after_layout(self, _screen) -> None:
        if self._pending is None:
            return
        first, last = self._pending
        if not (first.is_attached and last.is_attached):
            self._pending = None
            return
        if not (_laid_out(first) and _laid_out(last)):  # this layout is from before the change: the next one
            return
        self._pending = None
        region = first.virtual_region_with_margin.union(last.virtual_region_with_margin)
        self.scroll_to_region(region, animate=False, immediate=True)


def _laid_out(widget: Widget) -> bool:
    """Has the last layout seen the widget's new content? (Textual 8.2: a widget passes its layout request
    on to the screen from its own idle handler; a screen layout before that has the widget's old size,
    and a panel just shown is still empty.)"""
    return bool(widget.size.height) and not widget._layout_required


def reveal(first: Widget, last: Widget | None = None) -> None:
    """Bring ``first`` (down to ``last``) into view through its page, or by itself outside one."""
    page = next((a for a in first.ancestors if isinstance(a, Page)), None)
    if page is None:
        first.scroll_visible(animate=False)
    else:
        page.reveal(first, last)
