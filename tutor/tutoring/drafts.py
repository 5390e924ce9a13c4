"""What the learner typed in a drill and has not had verified: the answer boxes and the edited code.

Kept per drill in the profile, so leaving the drill, quitting, or losing the terminal and relaunching
finds the boxes and the code as the learner left them, in the TUI and in plain mode alike (one
profile, both front ends). The answers are forgotten once they verify the drill (the revisited drill
shows the verified ones); the code is kept until the learner resets it (ctrl+t, or plain mode's
repair typed again). Without a profile (an author's ``check``) drafts live only in memory.
"""

from __future__ import annotations

from typing import Mapping, Protocol

CODE = "code"
_ANSWER = "answer:"
SEED = "instance-seed"  # a variant drill: the seed of the instance the learner has open (tutor.course.variants)


class DraftStore(Protocol):
    """What drafts need from a profile (``ProfileStore``)."""

    def drafts(self, module: str, item: str) -> dict[str, str]: ...

    def save_drafts(self, module: str, item: str, fields: dict[str, str]) -> None: ...


class _Memory:
    def __init__(self) -> None:
        self._fields: dict[tuple[str, str], dict[str, str]] = {}

    def drafts(self, module: str, item: str) -> dict[str, str]:
        return dict(self._fields.get((module, item), {}))

    def save_drafts(self, module: str, item: str, fields: dict[str, str]) -> None:
        kept = self._fields.setdefault((module, item), {})
        for name, text in fields.items():
            if text:
                kept[name] = text
            else:
                kept.pop(name, None)


class Drafts:
    def __init__(self, store: DraftStore | None = None) -> None:
        self._store: DraftStore = store if store is not None else _Memory()

    # ---------------------------------------------------------------- code

    def code(self, module_id: str, drill_id: str) -> str | None:
        return self._store.drafts(module_id, drill_id).get(CODE)

    def keep_code(self, module_id: str, drill_id: str, code: str, original: str) -> None:
        """Keep ``code``; the drill's ``original`` code is no draft (nothing to keep)."""
        self._store.save_drafts(module_id, drill_id, {CODE: "" if code == original else code})

    def reset_code(self, module_id: str, drill_id: str) -> None:
        self._store.save_drafts(module_id, drill_id, {CODE: ""})

    # ---------------------------------------------------------------- answers

    def answers(self, module_id: str, drill_id: str) -> dict[str, str]:
        """The answer boxes as left: ask key -> text (only the boxes that held something)."""
        return {name[len(_ANSWER):]: text for name, text in self._store.drafts(module_id, drill_id).items()
                if name.startswith(_ANSWER)}

    def keep_answers(self, module_id: str, drill_id: str, texts: Mapping[str, str]) -> None:
        """Keep each box's text (an empty box forgets its draft)."""
        fields = {_ANSWER + key: text if text.strip() else "" for key, text in texts.items()}
        if fields:
            self._store.save_drafts(module_id, drill_id, fields)

    # ---------------------------------------------------------------- the open instance of a variant drill

    def seed(self, module_id: str, drill_id: str) -> int | None:
        text = self._store.drafts(module_id, drill_id).get(SEED, "")
        return int(text) if text.isdigit() else None

    def keep_seed(self, module_id: str, drill_id: str, seed: int) -> None:
        self._store.save_drafts(module_id, drill_id, {SEED: str(seed)})

    def forget_answers(self, module_id: str, drill_id: str) -> None:
        keys = self.answers(module_id, drill_id)
        self.keep_answers(module_id, drill_id, {key: "" for key in keys})
