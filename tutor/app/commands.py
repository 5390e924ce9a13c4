"""Command-palette entries: jump to any module by name or number."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider


class ModuleCommands(Provider):
    """Offers "Open 03 Storage, Strides, Views, and Copies" for every module."""

    def _entries(self):
        app = self.app
        for slot in app.session.course.slots:
            state = app.session.state(slot.id)
            label = f"Open {slot.id} {slot.title}"
            help_text = state.status.value + (f" — {state.reason}" if state.reason else "")
            yield label, partial(app.open_module, slot.id), help_text

    async def discover(self) -> Hits:
        for label, callback, help_text in self._entries():
            yield DiscoveryHit(label, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for label, callback, help_text in self._entries():
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), callback, help=help_text)
