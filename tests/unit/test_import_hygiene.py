"""The core never imports Textual or torch; the UI process never imports torch."""

from __future__ import annotations

import subprocess
import sys

CORE = ["tutor.course", "tutor.judge", "tutor.grading", "tutor.progress", "tutor.session", "tutor.commands.authoring",
        "tutor.sandbox", "tutor.sandbox.client", "tutor.cli", "tutor.commands.snippet_report", "tutor.progress.report"]


def loaded_after_import(modules: list[str]) -> set[str]:
    code = ("import sys, importlib\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            "print(' '.join(sorted(k.split('.')[0] for k in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_core_imports_neither_textual_nor_torch():
    loaded = loaded_after_import(CORE)
    assert "torch" not in loaded and "textual" not in loaded and "numpy" not in loaded


def test_the_app_does_not_import_torch():
    loaded = loaded_after_import(["tutor.app.app", "tutor.app.launch"])
    assert "textual" in loaded
    assert "torch" not in loaded
