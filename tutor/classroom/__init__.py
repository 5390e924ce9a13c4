"""For instructors: ``class-report`` (how the class did) and ``class watch`` / ``class hub-service`` (who is stuck now), over learners' profiles."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO


def _course(course_root: Path | None, err: TextIO):
    from tutor.course.loader import is_course_dir, load_course
    from tutor.locations import builtin_course_dir

    root = course_root or builtin_course_dir()
    if not is_course_dir(root):
        print(f"pytorch-tutor: {root} has no course.yaml; point --lessons at the course the class used", file=err)
        return None
    return load_course(root, "" if course_root is None else str(root))


def class_watch(paths: list[Path], course_root: Path | None, every: float = 5.0, once: bool = False,
                out: TextIO | None = None, err: TextIO | None = None) -> int:
    """The live view (``watch.py``) until interrupted; 2 when no profile could be read."""
    from tutor.classroom.watch import watch

    out, err = out or sys.stdout, err or sys.stderr
    course = _course(course_root, err)
    if course is None:
        return 2
    if not every > 0:
        print("pytorch-tutor: --every takes a number of seconds above 0", file=err)
        return 2
    status = watch(course, list(paths), out, every, once)
    if status == 2:
        print("pytorch-tutor: no profile could be read from the paths given", file=err)
    return status


def class_hub_service(patterns: list[str], course_root: Path | None, err: TextIO | None = None) -> int:
    """The live view as a JupyterHub service (``hub_service.py``) until the hub stops it."""
    from tutor.classroom.hub_service import serve_hub_service

    course = _course(course_root, err or sys.stderr)
    if course is None:
        return 2
    return serve_hub_service(course, patterns)


def class_report(paths: list[Path], course_root: Path | None, html_path: Path | None,
                 out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Print (or write as HTML) the report; 1 when a file had to be left out, 2 when none could be read."""
    out, err = out or sys.stdout, err or sys.stderr
    from tutor.classroom.render import html_page, print_terminal
    from tutor.classroom.report import build
    from tutor.wording import count

    course = _course(course_root, err)
    if course is None:
        return 2
    report = build(course, list(paths))
    for line in report.refused:
        print(f"left out: {line}", file=err)
    if not report.learners:
        print("pytorch-tutor: no profile or profile export could be read", file=err)
        return 2
    if html_path is not None:
        tmp = html_path.with_name(html_path.name + ".tmp")
        tmp.write_text(html_page(report), encoding="utf-8")
        tmp.replace(html_path)
        print(f"wrote {html_path} ({count(len(report.learners), 'learner')})", file=out)
    else:
        print_terminal(report, out)
    return 1 if report.refused else 0
