"""Command-palette entries: jump to any module or drill, open review or stats."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tutor.session import OPENABLE


class ModuleCommands(Provider):
    """"Open 03 Storage, Strides…" for every module, and each drill of the modules that are open."""

    def _entries(self):
        app = self.app
        session = app.session
        yield "Review what is due", app.action_review, "spaced review of missed drills and self-check questions"
        yield "Stats", app.action_stats, "accuracy, calibration and time per module and concept"
        for slot in session.course.slots:
            state = session.state(slot.id)
            help_text = state.status.value + (f" — {state.reason}" if state.reason else "")
            yield f"Open {slot.id} {slot.title}", partial(app.open_module, slot.id), help_text
            if state.status in OPENABLE and slot.module is not None:
                for drill in slot.module.drills:
                    done = "verified" if session.drill_done(slot.id, drill.id) else "not yet verified"
                    yield (f"Open {slot.id} › {drill.title}", partial(app.open_item, slot.id, drill.id),
                           f"{'exercise' if drill.is_exercise else 'drill'} in {slot.title} — {done}")

    async def discover(self) -> Hits:
        for label, callback, help_text in self._entries():
            yield DiscoveryHit(label, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for label, callback, help_text in self._entries():
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), callback, help=help_text)
