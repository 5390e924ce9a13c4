"""Profile export and import: one versioned JSON file that merges two machines' histories."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from tutor.progress.store import KINDS, Attempt, ProfileStore

FORMAT = "pytorch-tutor-profile"
VERSION = 1
MAX_IMPORT_BYTES = 64 << 20


def export_profile(store: ProfileStore, path: Path) -> int:
    """Write every attempt, card and the position to ``path``; return the number of attempts."""
    attempts = store.attempts()
    position = store.position()
    data = {
        "format": FORMAT,
        "version": VERSION,
        "attempts": [asdict(a) for a in attempts],
        "cards": [{"module": m, "item": i, "kind": k, "card": c} for m, i, k, c in store.cards()],
        "position": ({"module": position[0], "item": position[1], "at": store.position_at()}
                     if position else None),
    }
    tmp = Path(path).with_name(Path(path).name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    tmp.replace(path)
    return len(attempts)


def _key(a: Attempt) -> tuple:
    return (a.at, a.module, a.item, a.kind, json.dumps(a.answers, sort_keys=True), bool(a.correct))


def import_profile(store: ProfileStore, path: Path) -> tuple[int, int]:
    """Merge ``path`` into ``store``; return (attempts added, attempts already present).

    Raises ``ValueError`` with a message naming the problem; nothing is written then.
    """
    from tutor.review import ReviewQueue

    path = Path(path)
    try:
        if path.stat().st_size > MAX_IMPORT_BYTES:
            raise ValueError(f"{path} is larger than {MAX_IMPORT_BYTES >> 20} MiB")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{path} is not a profile export: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path} is not a pytorch-tutor profile export")
    if not isinstance(data.get("version"), int) or data["version"] > VERSION:
        raise ValueError(f"{path} was exported by a newer pytorch-tutor (format {data.get('version')}); update first")
    incoming = [_attempt(raw, i) for i, raw in enumerate(data.get("attempts") or [])]
    cards = [_card(raw, i) for i, raw in enumerate(data.get("cards") or [])]

    existing = {_key(a) for a in store.attempts()}
    added = 0
    for attempt in sorted(incoming, key=lambda a: a.at):
        if _key(attempt) in existing:
            continue
        store.record(attempt)
        existing.add(_key(attempt))
        added += 1
    queue = ReviewQueue(store)
    for module, item, kind, raw_card in cards:
        queue.merge_card(module, item, kind, raw_card)
    position = data.get("position")
    if isinstance(position, dict) and all(isinstance(position.get(k), str) for k in ("module", "item", "at")):
        if position["at"] > store.position_at():
            store.set_position_at(position["module"], position["item"], position["at"])
    return added, len(incoming) - added


def _attempt(raw: object, index: int) -> Attempt:
    where = f"attempt {index}"
    if not isinstance(raw, dict):
        raise ValueError(f"{where} is not an object")
    try:
        attempt = Attempt(
            module=str(raw["module"]), item=str(raw["item"]), kind=str(raw["kind"]), correct=bool(raw["correct"]),
            answers=dict(raw.get("answers") or {}), observed=dict(raw.get("observed") or {}),
            verdict=dict(raw.get("verdict") or {}), seconds=float(raw.get("seconds") or 0.0), at=str(raw["at"]),
            confidence=raw.get("confidence") if raw.get("confidence") in (1, 2, 3) else None,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{where} is malformed: {exc}") from None
    if attempt.kind not in KINDS:
        raise ValueError(f"{where} has an unknown kind {attempt.kind!r}")
    return attempt


def _card(raw: object, index: int) -> tuple[str, str, str, str]:
    from fsrs import Card

    if not isinstance(raw, dict) or not all(isinstance(raw.get(k), str) for k in ("module", "item", "kind", "card")):
        raise ValueError(f"card {index} is malformed")
    try:
        Card.from_json(raw["card"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"card {index} cannot be read: {exc}") from None
    return raw["module"], raw["item"], raw["kind"], raw["card"]
