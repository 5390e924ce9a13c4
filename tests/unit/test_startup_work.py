"""What launching and validating do not do: the work the startup targets (issue 11) depend on.

Not timed (speed is measured side by side in benchmarks/bench_startup.py); these pin the causes:
what the app imports before the map's first frame, what validate imports, and that a warm
validate reads its per-module warnings back instead of working them out again.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys

from tutor.course import giveaway
from tutor.locations import builtin_course_dir
from tutor.commands.validation import validate


def modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", f"import sys\n{code}\nprint(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_the_app_imports_no_tutoring_core_help_or_markdown_before_its_first_frame():
    loaded = modules_after("import tutor.cli, tutor.app.launch, tutor.app.app, tutor.app.screens.map")
    late = {"tutor.tutoring.service", "tutor.grading", "tutor.judge", "tutor.placement", "tutor.app.screens.help",
            "tutor.app.messages", "markdown_it", "pygments", "rich.markdown", "tutor.progress.stats",
            "tutor.sandbox.client", "tutor.sandbox.wire",  # the sandbox is made, its zygote started, after it
            "tutor.commands.capstone_mine",  # the map's capstone package line is drawn just after the first frame
            "yaml"}  # PyYAML only parses what the parsed-course cache does not hold
    assert not late & loaded, sorted(late & loaded)


def test_validate_imports_neither_the_sandbox_client_nor_the_tutoring_service():
    loaded = modules_after("import tutor.cli, tutor.commands.validation")
    assert not {"tutor.sandbox.client", "tutor.tutoring.service", "asyncio", "tutor.commands.authoring"} & loaded


def test_a_warm_validate_reads_the_warnings_back_and_an_edit_works_them_out_again(tmp_path, monkeypatch):
    course = tmp_path / "course"
    shutil.copytree(builtin_course_dir(), course)
    worked_out: list[str] = []
    real = giveaway.module_giveaways

    def counting(module, observed=None):
        worked_out.append(module.id)
        return real(module, observed)

    monkeypatch.setattr(giveaway, "module_giveaways", counting)
    first = io.StringIO()
    assert validate([course], first) == 0
    assert len(worked_out) >= 38
    worked_out.clear()
    again = io.StringIO()
    assert validate([course], again) == 0
    assert worked_out == []  # every module's warnings came from the cache
    assert again.getvalue().splitlines()[:-1] == first.getvalue().splitlines()[:-1]  # (the last line has the time)

    # a drill whose title now gives its answer away: that module (only) is worked out again, and warned about
    module_file = next(course.glob("03_*.yaml"))
    text = module_file.read_text()
    assert "title: " in text
    module_file.write_text(text.replace("title: ", "title: The answer is (1, 3) — ", 1))
    edited = io.StringIO()
    validate([course], edited)
    assert len(worked_out) == 1


def test_launch_collects_no_garbage_until_the_first_frame_then_freezes_what_is_alive(monkeypatch, tmp_path):
    """The collector's passes over the parsed course were ~70 ms of the first frame (bench_startup.py)."""
    import gc

    from tutor.app import launch as launching
    from tutor.app.app import TutorApp

    monkeypatch.setenv("PYTORCH_TUTOR_HOME", str(tmp_path))
    seen = {}
    real_open = launching.open_course_and_profile

    def open_and_note(*args, **kwargs):
        seen["loading"] = gc.isenabled()
        return real_open(*args, **kwargs)

    def run(app):
        seen["running"] = gc.isenabled()
        seen["after_frame"] = list(app._waiting_for_first_frame)

    monkeypatch.setattr(launching, "open_course_and_profile", open_and_note)
    monkeypatch.setattr(TutorApp, "run", run)
    assert gc.isenabled()
    try:
        assert launching.launch() == 0
        assert seen["loading"] is False and seen["running"] is False and gc.isenabled()  # on again when it ends
        gc.disable()
        for callback in seen["after_frame"]:  # what the first frame sets off
            callback()
        assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.enable()
