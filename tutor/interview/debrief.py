"""What an interview showed, derived from its recorded attempts (so any front end, or
``pytorch-tutor interview --debrief``, can show it again, and nothing is stored twice).

Score per area (the course's parts) and per kind of question, the mechanisms missed with the
misconception each wrong answer revealed, the items to redo (already due in the review queue),
time per question against its soft limit, calibration (how often "certain" was right), and the
learner's earlier interviews beside this one. ``markdown`` renders it for the screen, for plain
mode and for keeping (it reads as plain text too).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tutor.course.loader import Course
from tutor.interview.plan import KIND_WORDS, QuestionKind
from tutor.interview.run import note_of
from tutor.progress.mastery import NOT_MECHANISMS, misconceptions_of
from tutor.progress.store import CONFIDENCE_LEVELS, Attempt
from tutor.safe_text import inert
from tutor.wording import count


@dataclass(frozen=True)
class Line:
    number: int
    module: str
    item: str
    title: str
    kind: QuestionKind
    correct: bool
    seconds: float
    limit: float
    confidence: int | None
    misconceptions: tuple[str, ...]
    mechanisms: tuple[str, ...]

    @property
    def over_limit(self) -> bool:
        return self.seconds > self.limit


@dataclass(frozen=True)
class Past:
    id: str
    at: str
    minutes: int
    right: int
    asked: int

    @property
    def score(self) -> float:
        return self.right / self.asked if self.asked else 0.0


@dataclass(frozen=True)
class Debrief:
    id: str
    at: str
    minutes: int
    scope: str
    lines: tuple[Line, ...]
    areas: tuple[tuple[str, int, int], ...]  # (area, right, asked)
    kinds: tuple[tuple[str, int, int], ...]
    missed: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]  # (mechanism, misconceptions, items)
    redo: tuple[tuple[str, str, str], ...]  # (module, item, title)
    calibration: tuple[tuple[str, int, int], ...]  # (level word, answers, right)
    previous: tuple[Past, ...]  # earlier interviews, oldest first

    @property
    def right(self) -> int:
        return sum(line.correct for line in self.lines)

    @property
    def asked(self) -> int:
        return len(self.lines)

    @property
    def score(self) -> float:
        return self.right / self.asked if self.asked else 0.0


def interviews(attempts: list[Attempt]) -> dict[str, list[Attempt]]:
    """Each interview's attempts by its id, in the order the interviews were taken."""
    out: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        note = note_of(attempt)
        if note:
            out.setdefault(note["interview"], []).append(attempt)
    return out


def debrief(course: Course, attempts: list[Attempt], interview_id: str | None = None) -> Debrief | None:
    """The debrief of ``interview_id`` (the latest one when None); None when there is none."""
    taken = interviews(attempts)
    if not taken:
        return None
    interview_id = interview_id if interview_id is not None else list(taken)[-1]
    if interview_id not in taken:
        return None
    own = taken[interview_id]
    first_note = note_of(own[0])
    lines = tuple(_line(course, a) for a in own)
    previous = []
    for other_id, others in taken.items():
        if other_id == interview_id:
            break
        previous.append(Past(other_id, others[0].at, int(note_of(others[0]).get("minutes") or 0),
                             sum(a.correct for a in others), len(others)))
    return Debrief(interview_id, own[0].at, int(first_note.get("minutes") or 0), str(first_note.get("scope", "")),
                   lines, _by(lines, lambda line: _area(course, line.module)),
                   _by(lines, lambda line: KIND_WORDS[line.kind]), _missed(lines),
                   tuple(dict.fromkeys((line.module, line.item, line.title) for line in lines if not line.correct)),
                   _calibration(lines), tuple(previous))


def _line(course: Course, attempt: Attempt) -> Line:
    note = note_of(attempt)
    try:
        kind = QuestionKind(note.get("as"))
    except ValueError:
        kind = QuestionKind.PREDICT
    slot = course.slot(attempt.module)
    module = slot.module if slot else None
    drill = module.drill(attempt.item) if module is not None else None
    check = next((c for c in module.self_checks if c.id == attempt.item), None) if module is not None else None
    if drill is not None:
        title, tags = drill.title, tuple(t for t in drill.tags if t not in NOT_MECHANISMS)
    elif check is not None:
        title, tags = _first_line(check.question), ()
    else:  # an item the course no longer has
        title, tags = attempt.item, ()
    number = note.get("number")
    limit = note.get("limit")
    return Line(number if isinstance(number, int) else 0, attempt.module, attempt.item, title, kind, attempt.correct,
                attempt.seconds, float(limit) if isinstance(limit, (int, float)) else 0.0, attempt.confidence,
                tuple(misconceptions_of(attempt)), tags)


def _first_line(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[:limit - 1] + "…"


def _area(course: Course, module_id: str) -> str:
    slot = course.slot(module_id)
    part = next((p for p in course.parts if slot is not None and p.id == slot.part), None)
    return part.title if part is not None else f"module {module_id}"


def _by(lines, key) -> tuple[tuple[str, int, int], ...]:
    tally: dict[str, list[int]] = {}
    for line in lines:
        right_asked = tally.setdefault(key(line), [0, 0])
        right_asked[0] += int(line.correct)
        right_asked[1] += 1
    return tuple((name, right, asked) for name, (right, asked) in tally.items())


def _missed(lines) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
    found: dict[str, tuple[dict, dict]] = {}
    for line in lines:
        if line.correct or line.kind in (QuestionKind.CHOICE, QuestionKind.EXPLAIN):
            continue  # a self-check carries no mechanism tag: it is listed under "to redo"
        for mechanism in line.mechanisms or ("(not tagged)",):
            misconceptions, items = found.setdefault(mechanism, ({}, {}))
            misconceptions.update(dict.fromkeys(line.misconceptions))
            items[f"{line.module}/{line.item}"] = None
    return tuple((name, tuple(m), tuple(i)) for name, (m, i) in found.items())


def _calibration(lines) -> tuple[tuple[str, int, int], ...]:
    out = []
    for level, word in CONFIDENCE_LEVELS.items():
        said = [line for line in lines if line.confidence == level]
        if said:
            out.append((word, len(said), sum(line.correct for line in said)))
    return tuple(out)


# ---------------------------------------------------------------- rendering


def _cell(text: str) -> str:
    return inert(text).replace("|", "\\|").replace("\n", " ")


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def _when(at: str) -> str:
    try:
        return datetime.fromisoformat(at).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return inert(at)


def _pct(right: int, asked: int) -> str:
    return f"{right}/{asked} ({right / asked:.0%})" if asked else "—"


def markdown(d: Debrief, scope_title: str = "") -> str:
    """The debrief as Markdown (it reads as plain text too): what a learner keeps."""
    out = [f"# Interview debrief — {_when(d.at)}", "",
           f"{d.minutes} minutes · {inert(scope_title or d.scope)} · {count(d.asked, 'question')} · "
           f"score {_pct(d.right, d.asked)}", ""]
    if d.previous:
        last = d.previous[-1]
        delta = round((d.score - last.score) * 100)
        out += ["## Compared with your earlier interviews", "",
                f"Last time ({_when(last.at)}): {_pct(last.right, last.asked)}; now {d.score:.0%} "
                f"({'+' if delta >= 0 else ''}{delta} points).", ""]
        out += [f"- {_when(p.at)}, {p.minutes} min: {_pct(p.right, p.asked)}" for p in d.previous] + [""]
    else:
        out += ["This is your first interview: the next one's debrief compares with it.", ""]
    out += ["## Score by area", "", "| area | right |", "|---|---|"]
    out += [f"| {_cell(name)} | {_pct(right, asked)} |" for name, right, asked in d.areas] + [""]
    out += ["## Score by kind of question", "", "| kind | right |", "|---|---|"]
    out += [f"| {_cell(name)} | {_pct(right, asked)} |" for name, right, asked in d.kinds] + [""]
    out += ["## Mechanisms missed", ""]
    if d.missed:
        for mechanism, misconceptions, items in d.missed:
            out.append(f"- **{_cell(mechanism)}** ({', '.join(_cell(i) for i in items)})")
            out += [f"  - your answer showed a misconception: {_cell(m)}" for m in misconceptions]
    else:
        out.append("None: every drill question was right.")
    out += ["", "## To redo", ""]
    if d.redo:
        out.append("Each is in your review queue now (due within hours): `pytorch-tutor review`.")
        out += [f"- {module}/{_cell(item)}: {_cell(title)}" for module, item, title in d.redo]
    else:
        out.append("Nothing: every answer was right.")
    out += ["", "## Time per question", "", "| # | question | kind | time | limit | result |",
            "|---|---|---|---|---|---|"]
    for line in d.lines:
        over = " (over)" if line.over_limit else ""
        out.append(f"| {line.number} | {line.module} {_cell(line.title)} | {_cell(KIND_WORDS[line.kind])} | "
                   f"{_clock(line.seconds)}{over} | {_clock(line.limit)} | {'right' if line.correct else 'wrong'} |")
    out += ["", "## Calibration", ""]
    if d.calibration:
        out += [f"- said *{word}*: {count(answers, 'time')}, right {_pct(right, answers)}"
                for word, answers, right in d.calibration]
        certain = next((c for c in d.calibration if c[0] == CONFIDENCE_LEVELS[3]), None)
        if certain is not None and certain[2] < certain[1]:
            out.append(f"- 'certain' was wrong {count(certain[1] - certain[2], 'time')}: those are the answers to "
                       "look at first.")
    else:
        out.append("No answer carried a confidence.")
    return "\n".join(out) + "\n"
