"""Does anything a learner reads before the reveal give a drill's answer away?

Before a drill is answered the learner sees the module intro, the drill's title,
its prompt, each ask's question and (on request) the first hint tier. None of
these may answer the drill. Two kinds of leak are looked for:

* **the answer itself**: the value ``pytorch-tutor check`` observed for an ask
  (recorded by :mod:`tutor.course.observed_record`; the schema declares no
  expected values, and an observation is the truth anyway), in the spellings a
  learner would recognise: ``(1, 3)`` / ``1x3``, ``84``, ``RuntimeError``,
  ``MulBackward0``. A value the drill's code already shows is no leak, nor are
  yes/no answers, one-digit numbers and dtypes, too common to judge by their
  spelling. A prompt describes the inputs, and an answer often equals an
  input's property, so there only identifiers and exceptions count.
* **an outcome stated in the title**: a title in sentence form (not a question,
  not led by a gerund) says what happens instead of naming the topic, either
  with a finite verb ("Views share one version counter", "padding_idx gets no
  gradient") or with an outcome word the code and prompt do not hold ("A
  transpose moves no data"). For the intro, the test is a sentence sharing four
  words, one of them an outcome word, with a wrong answer's misconception.

* **a repair's fix named early**: an identifier the solution adds to the code
  (``batch_first``, ``detach_``) in the title or the first hint.

All are heuristics, measured on the course: on the titles that the content
audit rewrote as leaks (the 01-13 and 30-38 titles before it), the title test
flags 67 of the 123 that changed, most of the misses being titles that were
neutral already; on today's 480-odd titles it flags none. They warn (``validate``
still passes) and a reviewer reads the warning.

Nothing here imports torch: ``validate`` stays fast.
"""

from __future__ import annotations

import functools
import io
import json
import re
import tokenize
from dataclasses import dataclass
from typing import Iterable, Mapping

from tutor.course.schema import Ask, Drill, Module

# Words that say nothing about an outcome; the rest of a misconception is what it claims.
_STOP = frozenset("""
a an the and or but if then than that this these those there their them they it its it's is are was were be been
being has have had do does did of in on at to for from by with without into onto over under as so such not no nor
only also just very more most less each every any all some one two both either neither which what when where who
whom whose why how your you yours we our us i me my mine he she his her can could would should will shall may
might must same other another because while after before about per via like e.g. i.e. etc here
""".split())
# Short technical words that still carry meaning; everything else under 4 letters is noise.
_SHORT_KEEP = frozenset({"nan", "inf", "copy", "view", "zero", "none", "true", "false", "grad", "same", "new", "old"})

# Words that state an outcome (after _stem): a title holding one, and sharing the misconception's other
# words, is a claim about what happens, not a topic.
_OUTCOME = frozenset("""
copy copi copie share alias same differ zero nan inf never always still twice keep alive leak break broke lost
drop ignor raise fail silent return self equal move unchang nothing empty wrong stale reset overwri leav none
reduc

""".split())

_WORD = re.compile(r"[a-z][a-z0-9]*")
_SENTENCE = re.compile(r"(?<=[.!?:;])\s+|\n\s*\n|\n\s*[-*]\s+")


def _stem(word: str) -> str:
    for suffix in ("ing", "ies", "ied", "es", "ed", "ly", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:7]  # "contiguous"/"contiguity", "broadcast"/"broadcasting" meet here


@functools.lru_cache(maxsize=4096)  # a module's intro sentences are stemmed once per wrong answer otherwise
def _stems(text: str) -> frozenset[str]:
    words = _WORD.findall(_plain(text))
    return frozenset(_stem(w) for w in words if w not in _STOP and (len(w) >= 4 or w in _SHORT_KEEP))


def _plain(text: str) -> str:
    """Lower-case prose with Markdown marks and id hyphens turned into spaces."""
    return re.sub(r"[`*_\-]+", " ", text.lower())


@functools.lru_cache(maxsize=4096)  # each shown text is squashed once per spelling searched in it otherwise
def _squash(text: str, keep_case: bool = False) -> str:
    """For value spellings: Markdown code and bold marks gone, spaces folded (lower case unless ``keep_case``)."""
    text = re.sub(r"\s+", " ", re.sub(r"`|\*\*", "", text))
    return text if keep_case else text.lower()


@dataclass(frozen=True)
class Giveaway:
    """One text shown before the reveal that may answer a drill."""

    file: str
    line: int
    drill: str
    where: str  # title, intro, prompt, question of <ask>, first hint
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: warning: drill {self.drill!r}: the {self.where} {self.reason}"


def _value_spellings(kind: str, observed: str) -> list[str]:
    """How a learner would recognise ``observed`` (check's rendering) in prose; [] when too common to judge."""
    text = observed.strip()
    if kind in ("shape", "stride"):
        dims = re.findall(r"-?\d+", text)
        if len(dims) < 2 and not (dims and len(dims[0]) >= 2):
            return []  # (), (4,), (1,): every prompt has them
        return [f"({', '.join(dims)})", f"({','.join(dims)})", f"[{', '.join(dims)}]", "x".join(dims), "×".join(dims)]
    if kind in ("int", "float"):
        digits = text.rstrip(".")
        if not re.fullmatch(r"-?[\d.]+(e-?\d+)?", digits) or len(digits.lstrip("-").replace(".", "")) < 2:
            return []
        return [digits]
    if kind == "dtype":
        name = text.removeprefix("torch.")
        return [name] if name else []
    if kind == "error":
        return [text] if text.lower() != "no error" and len(text) >= 6 else []
    if kind == "choice":
        option = re.sub(r"^[a-z]\)\s*", "", text)
        return [option] if len(option) >= 6 else []
    if kind in ("text", "tensor", "value"):
        return [text] if len(text) >= 4 and text.lower() not in ("none", "true", "false") else []
    if kind == "names":
        names = [n.strip() for n in text.split(",") if n.strip() and n.strip() != "(none)"]
        return [", ".join(names)] if len(names) >= 2 else []
    return []  # bool, device: judged by the misconception test only


def _contains(haystack: str, spelling: str, keep_case: bool = False) -> bool:
    """``spelling`` in ``haystack`` as a whole token (``12`` is not in ``120`` or ``0.12``; ``float32`` is
    in ``torch.float32`` but not in ``bfloat32``)."""
    return _token_pattern(_squash(spelling, keep_case)).search(_squash(haystack, keep_case)) is not None


@functools.lru_cache(maxsize=4096)  # more spellings than re's own cache holds: compiling dominated validate
def _token_pattern(needle: str) -> re.Pattern[str]:
    # × joins a shape's sizes as x does (and x is a word character already): 3×3 is not in 4×3×3×4
    before = r"(?<![\w.×])" if re.match(r"[\d.-]", needle) else r"(?<!\w)" if re.match(r"\w", needle) else ""
    after = r"(?![\w×])" if re.search(r"\w$", needle) else ""
    return re.compile(before + re.escape(needle) + after)


# Which answers each text is searched for. A prompt and its questions describe the inputs, and an answer
# often equals an input's property (a dtype kept, a shape unchanged, a value broadcast): only answers no
# description needs (an identifier, an exception) count there. Dtypes are input descriptions everywhere;
# an intro introduces the module's own names. (The answer box's examples are checked by ``check``
# itself, with the judge, against every ask of their kind.)
_EVERYWHERE = frozenset({"shape", "stride", "int", "float", "text", "error", "choice", "tensor", "value", "names"})
_VALUE_KINDS_CHECKED = {
    "title": _EVERYWHERE,
    "first": _EVERYWHERE,  # the first hint
    "module": frozenset({"shape", "stride", "int", "float", "error", "tensor", "value"}),
    "prompt": frozenset({"text", "error"}),
    "question": frozenset({"text", "error"}),
}


def _shown_texts(drill: Drill, ask_of: Mapping[str, Ask]) -> list[tuple[str, str]]:
    """(where, text) for what the learner reads before the reveal, the intro apart."""
    texts = [("title", drill.title), ("prompt", drill.prompt)]
    for ask in drill.asks:
        texts.append((f"question of ask {ask.key!r}", ask.question))
    if drill.hints:
        texts.append(("first hint", drill.hints[0]))
    return texts


_NUMBER_KINDS = frozenset({"shape", "stride", "int", "float", "tensor", "value"})
_COMMON_NAMES = frozenset({"torch", "tensor", "import", "print", "nn", "F"})


def _names_code_of(sentence: str, drill: Drill) -> bool:
    """Whether a sentence names something of the drill's own code (a name it binds or calls): in backticks
    (`y`, `x.t()`), or spelled out when it is long enough not to be an ordinary word (`weight_decay`)."""
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", drill.code)) - _COMMON_NAMES - _PY_WORDS

    def named(text: str, n: str) -> bool:
        return re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", text) is not None

    quoted = " ".join(re.findall(r"`([^`]*)`", sentence))
    return any(named(quoted, n) or (len(n) >= 3 and named(sentence, n)) for n in names)


def _code_words(drill: Drill) -> set[str]:
    """What the code on screen already names: repeating it in prose tells the learner nothing."""
    return _stems(re.sub(r"[_.()\[\],=]", " ", drill.setup + "\n" + drill.code + "\n" + drill.prompt))


# Finite verbs that make a title a sentence about what happens ("Views share one version counter",
# "padding_idx gets no gradient", "Storage is bytes"). Words that are as often nouns ("counts",
# "records", "uses") are left out: "op counts in a profile" names a topic.
_CLAIM_VERBS = frozenset("""
is are isn't aren't was were has have gets get keeps keep costs cost refuses refuse copies shares
moves catches rewrites lives repeats stays stay wraps mutates skips decides decide gives takes makes
means punishes equals vanishes rescales breaks fails leaks drops ignores survives splits swaps adds
removes can cannot can't must never always beats reads sees wins loses needs need acts wants
normalises normalizes depends crosses marks converts hides stores returns restart
restarts starts meets widen widens
""".split())
# After one of these the rest is a clause inside a noun phrase or an embedded question:
# "A collective that only one rank calls", "Add-k smoothing, and why k is tuned".
_CLAUSE_START = frozenset("that which who whose why what how where when whether if".split())


def _title_words(title: str) -> list[str]:
    return re.findall(r"[a-z][a-z0-9_']*", title.lower().replace("`", ""))


def _claim_verb(title: str) -> str:
    """The finite verb of a title in sentence form, or "": "A permute moves no data" -> "moves"."""
    words = _title_words(title)
    if words[:1] == ["repair"]:
        words = words[1:]
    for i, word in enumerate(words):
        if word in _CLAUSE_START:
            return ""
        if word in _CLAIM_VERBS and i > 0:
            return word
    return ""


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@functools.lru_cache(maxsize=1024)  # a module's setup is shared by its drills
def _code_names(source: str) -> frozenset[str]:
    """The names a piece of Python uses (comments and strings left out); {} if it does not tokenize."""
    try:
        return frozenset(t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)
                         if t.type == tokenize.NAME)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return frozenset()


@functools.lru_cache(maxsize=256)
def _sentences(text: str) -> tuple[str, ...]:
    """The intro's sentences, split once per module rather than once per wrong answer."""
    return tuple(_SENTENCE.split(text))
# Python and English words a solution may add without naming the fix.
_PY_WORDS = frozenset("""
None True False self with else elif return assert import from lambda yield pass raise while break continue
try except finally class global nonlocal range list dict tuple print float then each into only this that
""".split())


_QUESTION_WORDS = frozenset("which what how where when why whose who does do did is are can will".split())


def _is_claim(title: str) -> bool:
    """A title in sentence form (not a question, not led by a gerund) asserts something."""
    words = _title_words(title)
    if words[:1] == ["repair"]:
        words = words[1:]
    if not words or title.rstrip().endswith("?") or words[0] in _QUESTION_WORDS:
        return False
    lead = words[0] if words[0] not in ("a", "an", "the") else (words[1] if len(words) > 1 else "")
    # "Freezing a backbone" names an activity; "Padding costs nothing" has a gerund for its subject
    gerund_subject = len(words) > 1 and words[1] in _CLAIM_VERBS
    return not lead.endswith("ing") or gerund_subject


def drill_giveaways(module: Module, drill: Drill, observed: Mapping[str, str] | None = None) -> list[Giveaway]:
    """Every pre-reveal text of ``drill`` that contains its observed answer or states a misconception.

    ``observed`` maps an ask key to the value ``check`` observed, rendered as the judge renders it;
    without it only the misconception test runs.
    """
    found: list[Giveaway] = []
    ask_of = {a.key: a for a in drill.asks}
    shown_code = drill.setup + "\n" + drill.code
    texts = _shown_texts(drill, ask_of)
    if module.intro.strip():
        texts.append(("module intro", module.intro))

    for key, value in (observed or {}).items():
        ask = ask_of.get(key)
        if ask is None:
            continue
        spellings = _value_spellings(ask.kind, value)
        exact = ask.kind == "text"  # "Tensor" the answer is not "tensor" the word
        if any(_contains(shown_code, s, exact) for s in spellings):
            continue  # the code shows it: saying it again gives nothing away
        for where, text in texts:
            if ask.kind not in _VALUE_KINDS_CHECKED[where.split(" ")[0]]:
                continue
            if where.startswith("question of ask") and where != f"question of ask {key!r}":
                continue  # another ask's question may name what this one answers ("did encoder.weight ...")
            if where == "module intro" and ask.kind in _NUMBER_KINDS:
                # the intro speaks of the whole module: a number there answers this drill only in a
                # sentence about this drill's code (a 3x3 kernel in the intro is not x.numel() == 3)
                text = " ".join(t for t in _sentences(text) if _names_code_of(t, drill))
            spelled = next((s for s in spellings if _contains(text, s, exact)), None)
            if spelled:
                found.append(Giveaway(module.file, drill.line, drill.id, where,
                                      f"contains the observed answer of ask {key!r} ({spelled})"))

    topic = _code_words(drill)
    title = _stems(drill.title) - topic
    outcome = title & _OUTCOME
    verb = _claim_verb(drill.title) if _is_claim(drill.title) else ""
    if verb and not outcome:
        found.append(Giveaway(module.file, drill.line, drill.id, "title",
                              f"is a sentence ({verb!r}) that says what happens: name the topic "
                              "(a noun phrase, a gerund or a question) instead"))
    if outcome and _is_claim(drill.title):
        related = sorted({w.answer for w in drill.wrong_answers if _stems(w.misconception) & title})
        against = f"; it answers the wrong answer(s) {', '.join(map(repr, related))}" if related else ""
        found.append(Giveaway(module.file, drill.line, drill.id, "title",
                              f"states an outcome ({', '.join(sorted(outcome))}) that the code and prompt do not"
                              f"{against}: name the topic (a noun phrase, a gerund or a question), not what happens"))
    # A repair's fix, named before the reveal: identifiers the solution adds to the code.
    if drill.is_repair:
        shown = _code_names(drill.setup) | _code_names(drill.code) | set(_IDENT.findall(drill.prompt))
        # identifiers only ("batch_first", "detach_"): "copy" or "eval" in a hint may be plain English
        added = {t for t in _code_names(drill.solution) - shown - _PY_WORDS
                 if re.search(r"_|\d|[a-z][A-Z]", t.strip("_"))}
        for where, text in [("title", drill.title), ("first hint", drill.hints[0] if drill.hints else "")]:
            named = sorted(added & set(_IDENT.findall(text.replace("`", " "))))
            if named:
                found.append(Giveaway(module.file, drill.line, drill.id, where,
                                      f"names what the repair adds ({', '.join(named)})"))
    if drill.is_first_divergence:  # the answer is a line: its code, its number or a misconception, named early
        from tutor.course.divergence_giveaway import divergence_giveaways

        found.extend(divergence_giveaways(module, drill, observed,
                                          lambda where, why: Giveaway(module.file, drill.line, drill.id, where, why),
                                          lambda text: _stems(text) - topic, _OUTCOME))
    for wrong in drill.wrong_answers:
        claim = _stems(wrong.misconception) - topic
        for sentence in _sentences(module.intro):
            shared = claim & _stems(sentence)
            if len(shared) >= 4 and shared & _OUTCOME:
                found.append(Giveaway(module.file, drill.line, drill.id, "module intro",
                                      f"has a sentence sharing {', '.join(sorted(shared))} with the misconception "
                                      f"of wrong answer {wrong.answer!r}: {sentence.strip()[:80]!r}"))
                break
    return _unique(found)


def _unique(found: Iterable[Giveaway]) -> list[Giveaway]:
    seen, out = set(), []
    for g in found:
        key = (g.drill, g.where, g.reason)
        if key not in seen:
            seen.add(key)
            out.append(g)
    return out


def module_giveaways(module: Module, observed: Mapping[str, Mapping[str, str]] | None = None) -> list[Giveaway]:
    """:func:`drill_giveaways` for every drill but labs (a lab has nothing to predict)."""
    observed = observed or {}
    return [g for d in module.drills if not d.is_exercise for g in drill_giveaways(module, d, observed.get(d.id))]


def course_giveaways(modules: Iterable[Module], fresh: Mapping[str, Mapping[str, str]] | None = None,
                     ) -> list[Giveaway]:
    """The warnings for ``modules``, with ``check``'s recorded observations (and ``fresh`` ones, keyed
    ``module file -> drill id -> ask key``, which are recorded first)."""
    from tutor.course import observed_record

    found: list[Giveaway] = []
    for module in modules:
        if fresh and fresh.get(module.file):
            observed_record.save(module, fresh[module.file])
        found.extend(_cached_module_giveaways(module, observed_record.load(module)))
    return found


def _cached_module_giveaways(module: Module, observed: Mapping[str, Mapping[str, str]]) -> list[Giveaway]:
    """:func:`module_giveaways`, remembered beside the parsed module: a warm ``validate`` reads them back.

    The key is the module file's parse key (its bytes, shown name and the parsing code, this
    check's code included) and the observations it is checked against.
    """
    from tutor.course import cache

    return cache.per_module("giveaways", module, lambda: module_giveaways(module, observed), Giveaway,
                            json.dumps(observed, sort_keys=True))
