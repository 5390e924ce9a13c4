"""One presenter: a report becomes neutral blocks (lines of toned spans, and a table).

The Rich/Textual rendering (``tutor.app.widgets.report_view``) and the plain-text
rendering (:func:`plain_lines`, used by plain mode) both draw these blocks, so what
a result says — its wording, its order, what is inert — is decided here once. Every
string from a lesson or a snippet passes through ``inert`` on its way in.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from tutor.course.lab_fields import CHECK_TEST
from tutor.judge import labs, option_label
from tutor.progress.store import AttemptKind
from tutor.safe_text import clip, inert
from tutor.tutoring.reports import PlacementReport, RunReport, SnippetReport, SymptomsReport
from tutor.tutoring.states import CheckStatus, Outcome
from tutor.tutoring.trace_view import trace_lines

OUTPUT_SHOWN = 4000


class Tone(StrEnum):
    PLAIN = "plain"
    STRONG = "strong"  # a label or a heading
    GOOD = "good"
    BAD = "bad"
    DIVERGENCE = "divergence"
    MISCONCEPTION = "misconception"
    DIM = "dim"
    CODE = "code"  # a line of Python
    OUTPUT = "output"  # what the snippet printed
    INLINE_CODE = "inline code"  # `code` inside lesson prose: its backticks dropped, the span marked instead


@dataclass(frozen=True)
class Span:
    text: str
    tone: Tone = Tone.PLAIN


@dataclass(frozen=True)
class Line:
    spans: tuple[Span, ...]

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.spans)


@dataclass(frozen=True)
class AskTable:
    """Predictions beside observations; ``graded`` False shows an experiment against the last answers."""

    # question, said, observed, correct (None: nothing to compare, as under a repair's table with no
    # last answer: no mark, not a ✗ beside "—")
    rows: tuple[tuple[str, str, str, bool | None], ...]
    graded: bool


Block = Line | AskTable


def line(*parts: str | tuple[str, Tone]) -> Line:
    return Line(tuple(Span(p) if isinstance(p, str) else Span(*p) for p in parts))


def prose(text: str, tone: Tone = Tone.PLAIN) -> tuple[tuple[str, Tone], ...]:
    """Lesson prose as spans: `code` loses its backticks and is marked instead (never printed raw)."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: leave the text as it is
        return ((text, tone),)
    return tuple((part, Tone.INLINE_CODE if i % 2 else tone) for i, part in enumerate(parts) if part)


# ---------------------------------------------------------------- small shared pieces


def option_lines(options: tuple[str, ...], indent: str = "   ") -> list[str]:
    """A question's options as they are listed everywhere: "   b) a copy"."""
    return [indent + option_label(i, inert(o)) for i, o in enumerate(options)]


def hint_line(hints: tuple[str, ...] | list[str], number: int) -> Line:
    """Hint ``number`` (from 1) of a drill's tiers."""
    return line((f"Hint {number}/{len(hints)}: ", Tone.STRONG), *prose(inert(hints[number - 1])))


def self_check_verdict(correct: bool | None, right_answer: str) -> str:
    if correct is True:
        return "Right."
    if correct is False:
        return f"Not quite: the answer is {inert(right_answer)}."
    return "Compare your answer with the model answer below."


RUBRIC_HEADING = "A full answer makes these points:"


def rubric_markdown(points: tuple[str, ...]) -> str:
    """A free-text question's rubric as Markdown (after the answer; empty when it declares none)."""
    if not points:
        return ""
    return f"**{RUBRIC_HEADING}**\n\n" + "\n".join(f"- {inert(point)}" for point in points)


def rubric_lines(points: tuple[str, ...]) -> list[str]:
    """The same rubric as plain lines."""
    return [RUBRIC_HEADING, *(f"  - {inert(point)}" for point in points)] if points else []


# ---------------------------------------------------------------- a run's report


def placement_summary(report: PlacementReport) -> str:
    """A placement's outcome in one paragraph, module by module (the app and plain mode both say it)."""
    parts = [f"{report.right}/{report.total} right."]
    if report.tested_out:
        parts.append(f"Tested out: {', '.join(report.tested_out)}.")
    if report.failed:
        parts.append(f"Not enough right in {', '.join(report.failed)}: those stay to study (a retry asks "
                     "other questions; read why above).")
    if report.held_back:
        parts.append(f"Passed but not marked: {', '.join(report.held_back)}, because a module they need is "
                     "neither done nor tested out.")
    parts.append(f"Module {report.module_id} is open." if report.passed
                 else f"Module {report.module_id} stays locked.")
    return " ".join(parts)


def run_blocks(report: RunReport, heading: str = "") -> list[Block]:
    """Everything a run's report shows, in order."""
    blocks: list[Block] = [line((heading, Tone.STRONG))] if heading else []
    if report.status is None:
        return blocks
    if not report.finished:
        blocks.append(line((report.message, Tone.BAD)))
    elif report.kind == AttemptKind.EXERCISE:
        blocks.extend(_lab_blocks(report))
    else:
        blocks.extend(_drill_blocks(report))
        from tutor.tutoring.view_blocks import views_blocks  # it draws with this module's blocks

        blocks.extend(views_blocks(report.views))  # a run's report comes after the reveal: views are safe here
    blocks.extend(output_blocks(report))
    return blocks


def _drill_blocks(report: RunReport) -> list[Block]:
    blocks: list[Block] = []
    if report.compile_error:  # the cause first: no ask below was evaluated
        blocks.append(line(("The code did not compile: ", Tone.BAD), inert(report.compile_error)))
    # The learner's own code (an experiment, a repair) raising is the cause of what follows: the asks and
    # the check then fail on names it never bound, at lines of theirs, not the learner's. Said first.
    learner_raised = bool(report.error) and not report.graded
    if learner_raised:
        blocks.append(line(("Your code raised ", Tone.BAD), inert(report.error)))
    if report.rows:
        blocks.append(AskTable(tuple((inert(r.question), inert(r.said), _observed_cell(r.observed, learner_raised),
                                      None if not report.graded and not r.said else r.correct)
                                     for r in report.rows), report.graded))
    if report.graded and report.divergence:
        blocks.append(line(("First divergence: ", Tone.DIVERGENCE), inert(report.divergence)))
    blocks.extend(_misconception_blocks(report))
    if report.error and not learner_raised:
        blocks.append(line(("Raised: ", Tone.STRONG), inert(report.error)))
    passed = report.check == CheckStatus.PASSED
    # The check tests the code, not the prediction: under a prediction, "passed" would read as praise
    # of the answer, so it is said only when the code was the learner's (an experiment, a repair) or failed.
    if report.check != CheckStatus.SKIPPED and not (report.graded and passed):
        message = "" if passed else f" — {inert(report.check_message)}"
        if learner_raised and not passed:  # its own failure follows from the error said above
            message = " — not reached: your code raised first (above)"
        blocks.append(line(("Check of the code: ", Tone.STRONG), (str(report.check), Tone.GOOD if passed else Tone.BAD),
                           message))
    blocks.extend(_fence_blocks(report))
    return blocks


def _observed_cell(observed: str, learner_raised: bool) -> str:
    """An ask that failed only because the learner's code raised before binding its names says so,
    not "NameError … (line 1 of the ask)", a line the learner never wrote."""
    if learner_raised and observed.startswith("evaluating it raised"):
        return "not reached: your code raised first"
    return inert(observed)


def _misconception_blocks(report: RunReport) -> list[Block]:
    """Each misconception beside the answer that showed it, so two of them never read as one sentence
    said twice (the question too when two answers were spelled alike: the table above has them in order)."""
    blocks: list[Block] = []
    wrong = [row for row in report.rows if row.misconception] if report.graded else []
    for row in wrong:
        alike = sum(other.said == row.said for other in wrong) > 1
        asked = [" (", *prose(inert(row.question)), ")"] if alike else []
        blocks.append(line((f"Your answer “{inert(row.said)}”", Tone.MISCONCEPTION), *asked,
                           (" reveals a common misconception: ", Tone.MISCONCEPTION), *prose(inert(row.misconception))))
    if report.submission_misconception:
        blocks.append(line(("Your code matches a common wrong submission: ", Tone.MISCONCEPTION),
                           *prose(inert(report.submission_misconception))))
    return blocks


def _lab_blocks(report: RunReport) -> list[Block]:
    """A lab: every named test with its result (n/m pass), the first failing one expanded.

    A broken fence rule is shown beside the tests' messages, never instead of them: the
    author's assertion says what is wrong with the code, the fence what else it changed.
    """
    if report.compile_error:
        return [line(("Your code did not compile: ", Tone.BAD), inert(report.compile_error))]
    tests = list(report.tests)
    named = len(tests) > 1 or any(t.name != CHECK_TEST for t in tests)
    solved = report.outcome == Outcome.SOLVED
    blocks: list[Block] = []
    if solved:
        blocks.append(line(("All checks pass ✓", Tone.GOOD)))
    elif report.error:
        blocks.append(line(("Your code raised ", Tone.BAD), inert(report.error)))
    if named:
        blocks.append(line((labs.summary(tests), Tone.DIM)))
        if not solved:
            blocks.extend(_test_list(tests, report.first_failure))
    elif not solved and not report.error and (report.first_failure is not None or report.check_message):
        blocks.append(line(("First failing check:", Tone.BAD)))
        blocks.extend(_failure_detail(report.first_failure, report.check_message))
    return blocks + _fence_blocks(report) + _misconception_blocks(report)


def _test_list(tests, first) -> list[Block]:
    blocks: list[Block] = []
    for test in tests:
        blocks.append(line(("✓ " if test.passed else "✗ ", Tone.GOOD if test.passed else Tone.BAD),
                           (inert(test.name), Tone.STRONG if test is first else Tone.PLAIN)))
        if test is first:
            blocks.extend(_failure_detail(test, ""))
    return blocks


def _failure_detail(failure, fallback: str) -> list[Block]:
    if failure is None:
        return [line(inert(fallback))] if fallback else []
    blocks: list[Block] = []
    if failure.message:  # what is wrong, first: the test's own line is how it was checked
        blocks.append(line(inert(failure.message)))
    if failure.source:
        blocks.append(line(("the failing line of the test:", Tone.DIM)))
        blocks.append(line((inert(failure.source), Tone.CODE)))
    return blocks


def _fence_blocks(report: RunReport) -> list[Block]:
    return [line((f"Fence rule broken: {inert(rule)}", Tone.BAD)) for rule in report.fence]


def output_blocks(report: RunReport | SnippetReport | SymptomsReport, label: str = "Output:",
                  shown: int = OUTPUT_SHOWN) -> list[Block]:
    if not report.output.strip():
        return []
    text = clip(inert(report.output.rstrip("\n")), shown)  # inert already from the sandbox: said here too
    blocks: list[Block] = [line((label, Tone.STRONG)), line((text, Tone.OUTPUT))]
    if report.output_truncated:
        blocks.append(line((f"… {report.output_truncated:,} more bytes of output were not kept", Tone.DIM)))
    return blocks


# ---------------------------------------------------------------- a snippet run (``pytorch-tutor run``)


def snippet_blocks(report: SnippetReport) -> list[Block]:
    """A snippet's run: the verdict first (in the heading), then output, variables, error, fence, verdict.

    The heading states the verdict because "— ok" above a SyntaxError would read as success.
    The output is shown whole (the sandbox's output cap already bounds it): it is what the
    learner ran the snippet to see.
    """
    good = Tone.GOOD if report.clean else Tone.BAD
    blocks: list[Block] = [line((f"== {inert(report.source)} — ", Tone.STRONG), (report.verdict, good),
                                (f" in {report.seconds:.2f} s", Tone.DIM))]
    blocks.extend(output_blocks(report, "-- output", shown=len(report.output) + 1))
    if not report.finished:
        return blocks + [line(("-- verdict: ", Tone.STRONG), (inert(report.message), Tone.BAD))]
    if report.variables:
        blocks.append(line(("-- variables", Tone.STRONG)))
        blocks.extend(line((f"{name} = ", Tone.STRONG), value) for name, value in report.variables)
    if report.trace is not None:
        blocks.extend(line(("-- " if i == 0 else "") + text) for i, text in enumerate(trace_lines(report.trace)))
    if report.views:
        from tutor.tutoring.view_blocks import views_blocks  # it draws with this module's blocks

        blocks.append(line(("-- views (what PyTorch recorded, after the code ran)", Tone.STRONG)))
        blocks.extend(views_blocks(report.views))
    if report.error:
        blocks.append(line(("-- error: ", Tone.BAD), inert(report.error)))
    blocks.extend(line((f"-- fence rule broken: {inert(rule)}", Tone.BAD)) for rule in report.fence)
    return blocks + [line(("-- verdict: ", Tone.STRONG), (report.verdict, good))]


# ---------------------------------------------------------------- plain text


def plain_lines(blocks: list[Block]) -> list[str]:
    """The blocks as plain text: a table becomes one line per prediction."""
    out: list[str] = []
    for block in blocks:
        if isinstance(block, AskTable):
            for question, said, observed, correct in block.rows:
                question = "".join(part for part, _tone in prose(question))
                mark = "✓ right" if correct else "✗ wrong" if correct is False else "nothing to compare"
                what = "you said" if block.graded else "your last answer"
                out.append(f"- {question}: {what} {said or '—'}; observed {observed or '—'} — {mark}")
        elif block.spans and block.spans[0].tone in (Tone.CODE, Tone.OUTPUT):
            out.extend("    " + text for text in block.text.splitlines())
        else:
            out.append(block.text)
    return out
