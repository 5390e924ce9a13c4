"""A hostile profile export (tests/hostile_pack.py) with the hostile pack through the commands that show
a profile (issue 28): the real CLI in a subprocess, as a terminal receives it, and the class report's
page. No raw control character reaches the output, and markup arrives as the text it is."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.hostile_pack import raw_controls, write_hostile_export, write_hostile_pack


def test_commands_show_a_hostile_profile_inert(tmp_path):
    pack = write_hostile_pack(tmp_path / "pack")
    export = write_hostile_export(tmp_path / "export.json")
    env = {**os.environ, "PYTORCH_TUTOR_HOME": str(tmp_path / "home"), "PYTHONIOENCODING": "utf-8"}

    def tutor(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "tutor", "--lessons", str(pack), "--trust-lessons", *args],
                              env=env, capture_output=True, timeout=120)
        out = (done.stdout + done.stderr).decode("utf-8")
        assert done.returncode == 0 and "Traceback" not in out, out
        return out

    imported = tutor("profile", "import", str(export))
    assert "Imported 3 attempts" in imported
    page = tmp_path / "report.html"
    tutor("class-report", str(export), "--html", str(page))
    outputs = {"profile import": imported, "progress": tutor("progress"), "stats": tutor("stats"),
               "review": tutor("review", "--list"), "class-report": tutor("class-report", str(export)),
               "class-report --html": page.read_text(encoding="utf-8")}
    for where, out in outputs.items():
        assert raw_controls(out) == [], where
    assert "01\ufffd" in outputs["stats"] and "[@click=app.quit]Q[/]" in outputs["stats"]  # the forged module id
    assert "[link=file:///etc/passwd]L[/]" in outputs["class-report"]
    assert "<a " not in outputs["class-report --html"] and "[link=file:///etc/passwd]" in outputs["class-report --html"]
