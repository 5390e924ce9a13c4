"""The layering contracts in pyproject.toml hold (import-linter), and cover every module of tutor/."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

from importlinter.domain.imports import Module

from tests.import_contracts import StandardLibraryOnly

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
UI = ("tutor.app", "tutor.web")
ENTRY = ("tutor", "tutor.__main__")  # the package itself and `python -m tutor`: they only start cli


def contract(starting: str) -> dict:
    return next(c for c in CONTRACTS if c["name"].startswith(starting))


def tutor_modules() -> list[str]:
    names = []
    for path in sorted((ROOT / "tutor").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def covered(module: str, packages: list[str] | tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_lint_imports_keeps_every_contract():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert lint, "import-linter is a test dependency: pip install -e '.[test]'"
    done = subprocess.run([lint], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_every_module_is_on_a_side():
    core = contract("The core never imports Textual")["source_modules"]
    no_torch = contract("The UI side never imports torch (")["source_modules"]
    front_door = contract("The UI side never imports torch: the sandbox")["source_modules"]
    inner = contract("The inner sandbox")["source_modules"]
    for module in tutor_modules():
        if module in ENTRY or covered(module, ["tutor.course_data"]):
            continue
        assert covered(module, core) or covered(module, UI), f"{module}: add it to the core or the UI contract"
        assert covered(module, no_torch) or module in front_door or covered(module, inner), f"{module}: add it to the no-torch or the inner contract"


def graph_with(imports: dict[str, list[str]]) -> grimp.ImportGraph:
    graph = grimp.ImportGraph()
    for importer, imported in imports.items():
        graph.add_module(importer)
        for name in imported:
            graph.add_module(name, is_squashed=name.split(".")[0] == name and "." not in name and name != importer)
            graph.add_import(importer=importer, imported=name, line_number=3, line_contents=f"import {name}")
    return graph


@pytest.mark.parametrize("imported, kept", [("os", True), ("torch", True), ("yaml", False), ("textual", False)])
def test_the_standard_library_contract_refuses_what_is_not_allowed(imported, kept):
    check = StandardLibraryOnly.__new__(StandardLibraryOnly)  # the contract's fields, without a config file
    check.source_modules = [Module("pkg.inner")]
    check.allowed = ["torch"]
    result = StandardLibraryOnly.check(check, graph_with({"pkg.inner": [imported]}), verbose=False)
    assert result.kept is kept
