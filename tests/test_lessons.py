"""Every claim in the built-in course, executed: `pytorch-tutor check` over lessons/."""

from __future__ import annotations

import io

import pytest

from tutor.authoring import check
from tutor.locations import builtin_course_dir

pytestmark = pytest.mark.slow


def test_every_builtin_drill_passes_check():
    out = io.StringIO()
    status = check([builtin_course_dir()], out)
    assert status == 0, out.getvalue()
    assert "check: ok" in out.getvalue()


def test_builtin_modules_meet_the_content_bar():
    from tutor.course.loader import load_course

    course = load_course(builtin_course_dir())
    for module in course.modules():
        assert len(module.drills) >= 8, module.id
        assert len(module.self_checks) >= 4, module.id
        for drill in module.drills:
            assert drill.hints and drill.explanation.strip(), drill.id
            # a prediction needs a plausible wrong answer; an exercise's starter plays that part
            assert drill.wrong_answers or (drill.is_exercise and drill.starter.strip()), drill.id
