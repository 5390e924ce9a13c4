"""Every free-text self-check of modules 01-19, and every triage self-check of the course, declares its rubric
(issue 35): the points a full answer makes, shown after the answer, rated against in the module and in interviews."""

from __future__ import annotations

import re

from tutor.course.loader import load_course
from tutor.locations import builtin_course_dir

TRIAGE = re.compile(r"first divergence|find the first", re.IGNORECASE)  # observe, first divergence, mechanism, ...


def test_free_text_self_checks_declare_their_rubric():
    course = load_course(builtin_course_dir())
    missing, triage = [], {}
    for module in course.modules():
        for check in module.self_checks:
            if check.is_choice:
                continue
            is_triage = bool(TRIAGE.search(check.answer))
            if is_triage:
                triage.setdefault(module.id, []).append(check.id)
            if (int(module.id) <= 19 or is_triage) and not check.points:
                missing.append(f"{module.id}/{check.id}")
    assert not missing, f"self-checks without `points:`: {missing}"
    assert sum(map(len, triage.values())) >= 40  # the course's triage questions, each with its rubric
    thin = [m.id for m in course.modules() if sum(bool(c.points) for c in m.self_checks) < 2]
    assert not thin, f"modules with fewer than two self-checks rated against a rubric: {thin}"
