"""Command-palette entries: jump to any module, drill or lab, open review or stats.

A drill or lab is found by the words of its title, its tags and its id ("micrograd" finds
07's "Lab: a scalar autograd engine"); those of a module that is not open yet are listed
too, and choosing one says why it is closed.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tutor.course.graph import Status
from tutor.session import OPENABLE


class ModuleCommands(Provider):
    """"Open 03 Storage, Strides…" for every module, and each of its drills and labs."""

    def _entries(self):
        app = self.app
        session = app.session
        yield "Review what is due", app.action_review, "spaced review of missed drills and self-check questions", ""
        yield "Stats", app.action_stats, "accuracy, calibration and time per module and concept", ""
        for slot in session.course.slots:
            state = session.state(slot.id)
            help_text = state.status.value + (f" — {state.reason}" if state.reason else "")
            yield f"Open {slot.id} {slot.title}", partial(app.open_module, slot.id), help_text, ""
            if state.status == Status.LOCKED and session.placement_set(slot.id):  # a way in, offered where it is closed
                yield (f"Test out of {slot.id} {slot.title}", partial(app.test_out, slot.id),
                       "a short placement on its prerequisites: pass it and the module opens", "placement skip")
            if slot.module is None:
                continue
            for drill in slot.module.drills:
                kind = "lab" if drill.is_exercise else "drill"
                if state.status in OPENABLE:
                    done = "verified" if session.drill_done(slot.id, drill.id) else "not yet verified"
                    opener = partial(app.open_item, slot.id, drill.id)
                else:
                    done, opener = help_text, partial(app.open_module, slot.id)  # says why it is closed
                words = " ".join((*drill.tags, drill.id.replace("-", " ")))
                yield f"Open {slot.id} › {drill.title}", opener, f"{kind} in {slot.title} — {done}", words

    async def discover(self) -> Hits:
        for label, callback, help_text, _words in self._entries():
            yield DiscoveryHit(label, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for label, callback, help_text, words in self._entries():
            score = matcher.match(label)
            shown = matcher.highlight(label) if score > 0 else label
            if words:  # tags and id: searched, not shown
                score = max(score, matcher.match(words) * 0.9)
            if score > 0:
                yield Hit(score, shown, callback, help=help_text)
