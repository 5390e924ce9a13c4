"""In an installed tutor (a wheel in site-packages) a snippet cannot read the built-in course.

The sandbox shows site-packages read-only (torch lives there), and the course, with
every solution and check, ships inside the ``tutor`` package there. Before the tutor's
own package was hidden, ``open(.../tutor/course_data/...yaml)`` printed any answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
FORBID = Path(__file__).resolve().parent / "forbid_namespaces.py"

PROBE = r"""
import sys
from tutor.sandbox.client import Sandbox, run_sync
from tutor.sandbox.wire import RunRequest
import tutor.course_data as data
target = data.__path__[0]
snippet = f'''
import os
target = {target!r}
try:
    listing = sorted(os.listdir(target))
except OSError as exc:
    listing = type(exc).__name__
try:
    leaked = open(os.path.join(target, "course.yaml")).read(200)
except OSError as exc:
    leaked = type(exc).__name__
import torch
works = float(torch.ones(2).sum())
'''
box = Sandbox()
result = run_sync(RunRequest(code=snippet), box)
obs = result.observation
print("TIER", box.tier_level)
print("TARGET", target)
for name in ("listing", "leaked", "works"):
    print(name.upper(), obs.variables[name].get("value", obs.variables[name]))
box.close_sync()
"""


@pytest.fixture(scope="module")
def installed_python(tmp_path_factory) -> str:
    """A fresh venv with the tutor installed from its wheel, torch taken from this environment."""
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(work / "dist")], check=True, capture_output=True)
    (wheel,) = (work / "dist").glob("*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # torch, numpy, yaml...: this environment's packages, after the venv's own
    Path(site, "zz_outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "-q", str(wheel)], check=True,
                   capture_output=True)
    return str(python)


def run_probe(python: list[str], tmp_path: Path) -> dict[str, str]:
    done = subprocess.run([*python, "-c", PROBE], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)


@pytest.mark.parametrize("forbid", [False, True], ids=["probe's-tier", "tier2"])
def test_the_installed_course_is_not_readable_from_a_snippet(installed_python, tmp_path, forbid):
    python = [installed_python, "-I", str(FORBID), installed_python] if forbid else [installed_python]
    seen = run_probe(python, tmp_path)
    assert "site-packages" in seen["TARGET"] and seen["WORKS"] == "2.0"
    if forbid:
        assert seen["TIER"] == "2"
    assert "format_version" not in seen["LEAKED"] and "modules" not in seen["LEAKED"], seen
    assert "course.yaml" not in seen["LISTING"], seen
