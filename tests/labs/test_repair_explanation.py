"""A repair drill's explanation names the bug, so it waits until the drill is done (issue 20)."""

from __future__ import annotations

import io
import shutil

import pytest

from tutor.course.loader import load_course
from tutor.plain.plain_tutor import run_plain
from tutor.progress.store import ProfileStore
from tutor.session import Session

pytestmark = pytest.mark.slow

EXPLANATION = "Why: keepdim keeps the reduced dimension as size 1."


def repair_only_course(tmp_path, mini_course_dir):
    root = tmp_path / "course"
    root.mkdir()
    shutil.copy(mini_course_dir / "02_second.yaml", root / "02_second.yaml")
    (root / "course.yaml").write_text(
        'format_version: 1\nid: repair-only\ntitle: One repair\nparts:\n  - {id: p, title: P}\n'
        'modules:\n  - {id: "02", part: p, requires: [], title: "Second", file: 02_second.yaml}\n')
    return load_course(root)


def test_plain_mode_explains_a_repair_only_once_it_is_repaired(tmp_path, mini_course_dir):
    course = repair_only_course(tmp_path, mini_course_dir)
    assert not course.all_errors(), course.all_errors()
    session = Session(course, ProfileStore.open(tmp_path / "p.sqlite"))
    script = "\n".join([
        "02",
        "RuntimeError", "",        # view-error: right (a prediction drill: explained at once)
        "(1,)", "",                # keepdim-bug: the symptom, predicted right
        "a = torch.ones(3)", "b = a.mean()", ".",   # the repair
        ":quit",
    ]) + "\n"
    out = io.StringIO()
    assert run_plain(session, "default", io.StringIO(script), out) == 0
    text = out.getvalue()
    assert "Why: view needs strides compatible" in text
    before_repair, _, after_repair = text.partition("Now repair the code")
    assert "Verified ✓ right." in before_repair
    assert EXPLANATION not in before_repair  # the fix is not given away before the learner repairs
    assert "Repaired ✓" in after_repair and EXPLANATION in after_repair
