"""Command-line views of a profile: progress, stats, review, export/import, and plain mode's start."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from tutor.progress.report import print_progress
from tutor.progress.stats import (BRIER_GLOSS, THINKING_TIME, WEAKEST_GLOSS, format_duration, history_line, spark,
                                  weakest_lines)
from tutor.progress.transfer import export_profile, import_profile
from tutor.safe_text import inert
from tutor.session import Session
from tutor.startup import StartupError, open_course_and_profile
from tutor.wording import count


def _open(args: argparse.Namespace):
    return open_course_and_profile(args.profile, args.lessons, runs_code=False)  # these run no lesson code


def main(args: argparse.Namespace, out: TextIO) -> int:
    if args.command == "interview" and not args.debrief:
        return interview(args)
    try:
        course, store = _open(args)
    except StartupError as exc:
        print(f"pytorch-tutor: {exc}", file=sys.stderr)
        return 2
    try:
        if store.notice:
            print(store.notice, file=out)
        if args.command == "progress":
            return print_progress(args.profile, course, Session(course, store).progress, store.position(), out)
        if args.command == "stats":
            print_stats(Session(course, store), out)
            return 0
        if args.command == "profile":
            return transfer(store, args, out)
        if args.command == "interview":
            return print_debrief(Session(course, store), args.markdown, out)
        due = Session(course, store).review.due()
        print_due(course, due, out)
    finally:
        store.close()
    if args.command == "review" and not args.list and due and sys.stdout.isatty():
        from tutor.app.launch import launch

        return launch(profile=args.profile, lessons=args.lessons, trust_lessons=args.trust_lessons, start="review")
    return 0


def print_stats(session: Session, out: TextIO) -> None:
    stats = session.stats()
    print(f"Thinking time: {format_duration(stats.total_seconds)} ({THINKING_TIME})", file=out)
    print(f"Last 14 days: {spark(stats.daily)}  ({count(sum(stats.daily), 'attempt')})", file=out)
    print(f"Recent predictions (● right, ○ wrong): {history_line(stats.recent) or '—'}", file=out)
    print(stats.first_try_line(), file=out)
    print(stats.interview_line(), file=out)
    print("", file=out)
    print(f"{'module':<8}{'drills':>7}{'first try':>11}{'attempts':>10}{'time':>14}", file=out)
    for module_id, tally in stats.modules.items():
        accuracy = f"{tally.accuracy:.0%}" if tally.accuracy is not None else "—"
        print(f"{module_id:<8}{tally.drills:>7}{accuracy:>11}{tally.attempts:>10}{format_duration(tally.seconds):>14}",
              file=out)
    if stats.concepts:
        print("", file=out)
        print(f"{'concept':<24}{'drills':>7}{'first try':>11}", file=out)
        for concept, tally in stats.concepts.items():
            accuracy = f"{tally.accuracy:.0%}" if tally.accuracy is not None else "—"
            print(f"{concept:<24}{tally.drills:>7}{accuracy:>11}", file=out)
    print("", file=out)
    weak = weakest_lines(session.course, stats.weakest)
    print(f"Weakest mechanisms ({WEAKEST_GLOSS}):" if weak else "Weakest mechanisms: none yet (every mechanism "
          "you met is mastered, or you have not met one).", file=out)
    for line in weak:
        print(f"  {inert(line)}", file=out)
    print("", file=out)
    lines = stats.calibration_lines()
    print("Calibration:" if lines else "Calibration: no predictions with a confidence yet.", file=out)
    for line in lines:
        print("  " + line, file=out)
    if stats.brier is not None:
        print(f"  Brier score {stats.brier:.3f}: {BRIER_GLOSS}; always saying 'fairly sure' and being right "
              "two times in three scores 0.222", file=out)


def print_debrief(session: Session, path, out: TextIO) -> int:
    """`interview --debrief [--markdown FILE]`: the last interview's debrief, printed or written to FILE."""
    from tutor.interview.debrief import debrief, markdown
    from tutor.interview.plan import scopes

    found = debrief(session.course, session.store.attempts())
    if found is None:
        print("No interview yet: `pytorch-tutor interview` takes one.", file=out)
        return 1
    titles = {s.key: s.title for s in scopes(session.course, set())}
    text = markdown(found, titles.get(found.scope, ""))
    if path is None:
        print(text, file=out, end="")
        return 0
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"pytorch-tutor: cannot write {path}: {exc.strerror}", file=sys.stderr)
        return 1
    print(f"Wrote the debrief of the interview of {found.at} to {path}", file=out)
    return 0


def interview(args: argparse.Namespace) -> int:
    """`interview`: the app's interview screen on a terminal; plain mode with --plain or without one."""
    if args.plain or not sys.stdin.isatty():
        return plain(args, interview=(args.minutes, args.scope))
    from tutor.app.launch import launch

    return launch(profile=args.profile, lessons=args.lessons, trust_lessons=args.trust_lessons,
                  allow_grants=args.allow_grants, start="interview", interview=(args.minutes, args.scope))


def print_due(course, due, out: TextIO) -> None:
    if not due:
        print("Nothing is due for review today.", file=out)
        return
    from tutor.tutoring.review_text import due_kind, due_summary, due_title, due_when

    print(f"{due_summary(len(due))} for review:", file=out)
    for item in due:
        slot = course.slot(item.module)
        title = inert(slot.title) if slot else "?"
        print(f"  {item.module} {title} — {due_kind(item)}: {due_title(course, item)} ({due_when(item.due)})",
              file=out)


def transfer(store, args: argparse.Namespace, out: TextIO) -> int:
    from tutor.workspace import profile_workspace

    workspace = profile_workspace(args.profile)  # every course's lab files (workspace/<profile>/courses/<course>/)
    if args.action == "export":
        try:
            report = export_profile(store, args.file, workspace, learner=getattr(args, "name", None) or "")
        except OSError as exc:
            print(f"pytorch-tutor: cannot write {args.file}: {exc.strerror}", file=sys.stderr)
            return 1
        courses = f" of {count(report.courses, 'course')}" if report.courses > 1 else ""
        print(f"Exported {count(report.attempts, 'attempt')}{courses} and {count(report.files, 'lab workspace file')} to {args.file}",
              file=out)
        for why in report.skipped:
            print(f"  not exported: {inert(why)}", file=out)
        return 0
    try:
        report = import_profile(store, args.file, workspace)
    except (ValueError, OSError) as exc:
        print(f"pytorch-tutor: {inert(str(exc))}", file=sys.stderr)
        return 1
    print(f"Imported {count(report.added, 'attempt')} ({report.present} were already here) and "
          f"{count(report.files, 'lab workspace file')} from {args.file}", file=out)
    for aside in report.kept:
        print(f"  your own version was kept beside it: {aside}", file=out)
    return 0


def plain(args: argparse.Namespace, interview: tuple[int | None, str | None] | None = None) -> int:
    from tutor.plain.plain_tutor import run_plain
    from tutor.startup import ask_on_terminal

    try:
        course, store = open_course_and_profile(args.profile, args.lessons, args.trust_lessons,
                                                consent=ask_on_terminal, allow_grants=args.allow_grants)
    except StartupError as exc:
        print(f"pytorch-tutor: {exc}", file=sys.stderr)
        return 2
    try:
        # an author previewing their pack (`--lessons DIR --watch`): every written module opens, as in the app
        session = Session(course, store, author=bool(getattr(args, "watch", False)))
        start = None
        if args.module or args.start_drill:
            try:
                start = session.start_point(args.module, args.start_drill)
            except ValueError as exc:
                print(f"pytorch-tutor: {inert(str(exc))}", file=sys.stderr)
                return 2
        return run_plain(session, args.profile, start=start, interview=interview)
    finally:
        store.close()
