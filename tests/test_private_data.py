"""A learner's profile is theirs alone on a shared machine (issue 28: home 0755 and profile 0644 let
another learner on the same JupyterHub read it). Through the real command, under umask 022."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path


def tutor(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTORCH_TUTOR_HOME": str(home)}, umask=0o022)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_what_the_tutor_keeps_is_private_whatever_the_umask(tmp_path):
    home = tmp_path / "home"
    assert tutor("progress", home=home).returncode == 0
    export = tmp_path / "shared" / "me.json"
    export.parent.mkdir()
    done = tutor("profile", "export", str(export), home=home)
    assert done.returncode == 0, done.stderr
    assert mode(home) == 0o700 and mode(home / "profiles") == 0o700 and mode(home / "workspace") == 0o700
    assert mode(home / "profiles" / "default.sqlite") == 0o600
    assert mode(export) == 0o600  # the export holds every answer too
    assert "note" not in done.stderr


def test_an_older_tutors_loose_profile_is_tightened_with_a_note(tmp_path):
    home = tmp_path / "home"
    assert tutor("progress", home=home).returncode == 0
    profile = home / "profiles" / "default.sqlite"
    (home / "workspace").mkdir(exist_ok=True)
    for path, loose in ((home, 0o755), (home / "profiles", 0o755), (home / "workspace", 0o775), (profile, 0o644)):
        os.chmod(path, loose)  # what a tutor before this change left under umask 022
    done = tutor("progress", home=home)
    assert done.returncode == 0
    assert f"note: {home} was readable by other users (0755); it is now 0700" in done.stderr
    assert f"note: {profile} was readable by other users (0644); it is now 0600" in done.stderr
    assert "Traceback" not in done.stderr
    assert (mode(home), mode(home / "profiles"), mode(home / "workspace"), mode(profile)) == (0o700, 0o700, 0o700,
                                                                                              0o600)
    again = tutor("progress", home=home)
    assert "note" not in again.stderr  # said once, when it changed something
