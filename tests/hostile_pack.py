"""A lesson pack whose every learner-visible text is hostile, and a scan for what must never reach a screen.

Built from the mini course: the course, part and module titles, the intro, a drill's title, prompt,
question, explanation, hints, misconception and tags, a self-check's question, model answer and
option, and a snippet's printed output each carry terminal escapes (OSC 52 clipboard write, clear
screen, a C1 CSI), a bidi override, a zero-width space and Rich/Textual markup (a click action, a
file link). Shared by the CLI, plain-mode and app tests of issue 28's "one sanitiser walk".
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

MINI = Path(__file__).resolve().parent / "fixtures" / "mini_course"
EVIL = ("\x1b]52;c;ZXZpbA==\x07\x1b[2J\u202eevil\u200b[@click=app.quit]Q[/][link=file:///etc/passwd]L[/]"
        "\x9b31m")
# What no terminal or page may receive raw: C0 but newline and tab, DEL, C1, bidi controls, zero-width
# characters, line and paragraph separators, the byte-order mark.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ufeff]")


def raw_controls(text: str) -> list[str]:
    """Each raw control character in ``text``, with a little context, as repr."""
    return [repr(text[max(0, m.start() - 20):m.start() + 5]) for m in RAW.finditer(text)]


def write_hostile_pack(dst: Path) -> Path:
    shutil.copytree(MINI, dst)
    q = json.dumps  # YAML reads a JSON string, \u escapes included

    def edit(name: str, replacements: dict[str, str]) -> None:
        text = (dst / name).read_text()
        for old, new in replacements.items():
            assert old in text, old
            text = text.replace(old, new)
        (dst / name).write_text(text)

    edit("course.yaml", {
        "title: Mini course for tests": f"title: {q('Mini ' + EVIL)}",
        'title: "First steps"': f"title: {q('First ' + EVIL)}",
        "{id: basics, title: Basics}": "{id: basics, title: " + q("Basics " + EVIL) + "}",
    })
    edit("01_first.yaml", {
        "intro: Two tiny drills and one question.": f"intro: {q('Intro ' + EVIL)}",
        "title: What a transpose does to strides": f"title: {q('Title ' + EVIL)}",
        "explanation: A transpose swaps the strides; no element moves.": f"explanation: {q('Expl ' + EVIL)}",
        'hints: ["How far apart are neighbours in a row of x?", "Swap the two strides of x."]':
            f"hints: [{q('Hint ' + EVIL)}, {q('Hint2 ' + EVIL)}]",
        "misconception: a transpose copies the data}": f"misconception: {q('Misc ' + EVIL)}}}",
        'question: "y.stride()"}': f"question: {q('Q ' + EVIL)}}}",
        "question: Why can a transpose be free?": f"question: {q('SC ' + EVIL)}",
        "answer: Because it only swaps strides.": f"answer: {q('Model ' + EVIL)}",
        'options: ["x.t()", "x.clone()"]': f"options: [{q('opt ' + EVIL)}, \"x.clone()\"]",
        "  - id: sum-dtype\n    prompt:": f"  - id: sum-dtype\n    tags: [{q('tag' + EVIL)}]\n    prompt:",
        'print("transposed")': 'print("transposed\\x1b]52;c;QQ==\\x07\\u202e[@click=app.quit]X[/]")',
    })
    return dst


def write_hostile_export(target: Path) -> Path:
    """A profile export (as `profile export` writes it) for the mini course whose answers, observations,
    a module id and a timestamp carry ``EVIL``: an export is untrusted like a pack."""
    from tutor.progress.store import Attempt, ProfileStore
    from tutor.progress.transfer import export_profile

    store = ProfileStore.open(target.with_suffix(".sqlite"))
    store.use_course("mini-course")
    try:
        for item, answer, right in [("transpose-strides", "(3, 1)" + EVIL, False),
                                    ("transpose-strides", "(1, 3)", True), ("sum-dtype", EVIL, False)]:
            store.record(Attempt(module="01", item=item, kind="prediction", correct=right,
                                 answers={"y.stride()" + EVIL: answer}, observed={"y.stride()": EVIL},
                                 verdict={}, seconds=12.0, confidence=2))
        export_profile(store, target)
    finally:
        store.close()
    data = json.loads(target.read_text())
    data["attempts"][0]["at"] += EVIL
    data["attempts"][2]["module"] += EVIL
    target.write_text(json.dumps(data))
    return target


def poison_code(pack: Path) -> Path:
    """The first drill's code with ``EVIL`` in a comment, for tests that run no snippet (the scripted
    sandbox knows the mini course's code as it is)."""
    import yaml

    path = pack / "01_first.yaml"
    module = yaml.safe_load(path.read_text())
    module["drills"][0]["code"] = module["drills"][0]["code"].replace("y = x.t()\n", f"y = x.t()  # {EVIL}\n", 1)
    path.write_text(yaml.safe_dump(module))  # PyYAML writes the escapes as a double-quoted string
    return pack
