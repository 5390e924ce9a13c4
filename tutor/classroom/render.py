"""The class report as terminal tables (Rich) or a self-contained HTML page with charts.

Charts are drawn by matplotlib, an optional extra (``pip install 'pytorch-tutor[report]'``),
as inline SVG: the page needs no network and no script. Without matplotlib the page has the
same tables and says how to get the charts. Every string is escaped (names come from file
names, titles from a course that may be third-party).
"""

from __future__ import annotations

import html
import io
from typing import TextIO

from rich.console import Console
from rich.table import Table

from tutor.classroom.report import Certainty, ClassReport
from tutor.progress.stats import format_duration
from tutor.safe_text import inert
from tutor.wording import count


def _percent(value: float | None) -> str:
    return f"{value:.0%}" if value is not None else "—"


def _certain(c: Certainty) -> str:
    return f"{c.rate:.0%} of {c.said}" if c.said else "—"


def _listed(items: list[tuple[str, int]]) -> str:
    return "; ".join(f"{inert(text)} ({n})" for text, n in items) or "—"


def module_rows(report: ClassReport) -> list[list[str]]:
    return [[f"{m.id} {inert(m.title)}", str(m.started), str(m.finished), format_duration(m.seconds),
             _certain(m.certainty), _listed(m.missed), _listed(m.misconceptions)]
            for m in report.modules]


MODULE_COLUMNS = ["module", "started", "finished", "time", "“certain” right", "most missed drills (learners)",
                  "misconceptions revealed (learners)"]
LEARNER_COLUMNS = ["learner", "modules done", "started", "drills done", "right first try", "“certain” right",
                   "attempts", "time", "last activity"]


def learner_rows(report: ClassReport) -> list[list[str]]:
    return [[r.name, str(r.modules_done), str(r.modules_started), str(r.drills_done), _percent(r.first_try),
             _certain(r.certainty), str(r.attempts), format_duration(r.seconds), r.last_at or "—"]
            for r in report.learners]


def print_terminal(report: ClassReport, out: TextIO) -> None:
    is_terminal = hasattr(out, "isatty") and out.isatty()
    width = max(100, Console(file=out).width) if is_terminal else 120  # a file or a pipe: 120 columns, cells fold
    console = Console(file=out, width=width, highlight=False, markup=False)
    console.print(f"Class report — {inert(report.course_title)}: {count(len(report.learners), 'learner')}", style="bold")
    # the learners first: who needs help is the question an instructor opens the report with
    # the two columns of free text go below the module table, a module a line, so the table fits 120 columns
    short = len(MODULE_COLUMNS) - 2
    for title, columns, rows in (("Per learner", LEARNER_COLUMNS, learner_rows(report)),
                                 ("Per module", MODULE_COLUMNS[:short], [r[:short] for r in module_rows(report)])):
        table = Table(title=title, expand=True, show_lines=False)
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    wrong = [(f"{m.id} {inert(m.title)}", m) for m in report.modules if m.missed or m.misconceptions]
    if wrong:
        console.print("Where learners went wrong", style="bold")
    for name, m in wrong:
        console.print(name)
        for text, n in m.missed:
            console.print(f"  missed by {n}: {inert(text)}")
        for text, n in m.misconceptions:
            console.print(f"  misconception of {n}: {inert(text)}")


def _charts(report: ClassReport) -> list[str] | None:
    """Inline SVG charts, or None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("svg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    ids = [m.id for m in report.modules]
    svgs = []

    def emit(fig) -> None:
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", bbox_inches="tight")
        plt.close(fig)
        text = buffer.getvalue()
        svgs.append(text[text.index("<svg"):])  # drop the XML prolog and doctype: inline in HTML

    fig, ax = plt.subplots(figsize=(max(6, len(ids) * 0.45), 3.2))
    x = range(len(ids))
    ax.bar([i - 0.2 for i in x], [m.started for m in report.modules], width=0.4, label="started")
    ax.bar([i + 0.2 for i in x], [m.finished for m in report.modules], width=0.4, label="finished")
    ax.set_xticks(list(x), ids)
    ax.set_xlabel("module")
    ax.set_ylabel("learners")
    ax.set_title("Learners who started and finished each module")
    ax.legend()
    emit(fig)

    fig, ax = plt.subplots(figsize=(max(6, len(ids) * 0.45), 3.2))
    ax.bar(list(x), [m.seconds / 60 for m in report.modules])
    ax.set_xticks(list(x), ids)
    ax.set_xlabel("module")
    ax.set_ylabel("minutes (all learners)")
    ax.set_title("Time spent per module")
    emit(fig)

    names = [r.name for r in report.learners]
    fig, ax = plt.subplots(figsize=(6, max(2.5, len(names) * 0.3)))
    ax.barh(names, [(r.first_try or 0) * 100 for r in report.learners], label="right first try")
    ax.barh(names, [(r.certainty.rate or 0) * 100 for r in report.learners], height=0.3,
            label="“certain” and right")
    ax.set_xlim(0, 100)
    ax.set_xlabel("percent")
    ax.set_title("Accuracy and calibration per learner")
    ax.invert_yaxis()
    ax.legend(loc="lower right")
    emit(fig)
    return svgs


def _table(columns: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_page(report: ClassReport) -> str:
    charts = _charts(report)
    title = f"Class report — {inert(report.course_title)}"
    parts = [f"<h1>{html.escape(title)}</h1>", f"<p>{count(len(report.learners), 'learner')}.</p>"]
    if report.refused:
        parts.append("<h2>Files left out</h2><ul>" + "".join(f"<li>{html.escape(r)}</li>" for r in report.refused)
                     + "</ul>")
    if charts is None:
        parts.append("<p class=note>Charts need matplotlib: <code>pip install 'pytorch-tutor[report]'</code>.</p>")
    else:
        parts.append("<div class=charts>" + "".join(f"<figure>{svg}</figure>" for svg in charts) + "</div>")
    parts.append("<h2>Per learner</h2>" + _table(LEARNER_COLUMNS, learner_rows(report)))
    parts.append("<h2>Per module</h2>" + _table(MODULE_COLUMNS, module_rows(report)))
    style = ("body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;"
             "margin-bottom:2em}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}"
             "th{background:#f3f3f3}.charts figure{display:inline-block;margin:0 1em 1em 0;max-width:100%}"
             ".charts svg{max-width:100%;height:auto}.note{color:#a50}")  # a 38-module chart fits 1280 px
    return (f"<!DOCTYPE html><html><head><meta charset=utf-8><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>")
