"""`new course` and `new module` write what `validate` and `check` pass at once."""

from __future__ import annotations

import io

import pytest

from tutor.commands.authoring import check, validate
from tutor.cli import main
from tutor.course.loader import load_course


@pytest.fixture
def pack(tmp_path):
    assert main(["new", "course", str(tmp_path / "my-pack")]) == 0
    course_dir = tmp_path / "my-pack" / "my_pack"
    assert main(["new", "module", str(course_dir), "--id", "02", "--title", "Views: and \"copies\""]) == 0
    return course_dir


def test_a_scaffolded_pack_validates_without_warnings(pack):
    out = io.StringIO()
    assert validate([pack], out) == 0, out.getvalue()
    assert "warning" not in out.getvalue()
    course = load_course(pack)
    assert course.id == "my-pack" and [s.id for s in course.slots] == ["01", "02"]
    assert course.slot("02").requires == ("01",) and course.slot("02").title == 'Views: and "copies"'
    kinds = {d.kind.value for d in course.slot("01").module.drills}
    assert kinds == {"prediction", "repair", "lab"}
    checks = course.slot("01").module.self_checks
    assert any(c.options for c in checks) and any(not c.options for c in checks)
    assert (pack.parent / "pyproject.toml").read_text().count('"pytorch_tutor.courses"') == 1


def test_validate_on_the_project_directory_finds_the_course_in_it(pack, tmp_path):
    # issue 33 item 10: `validate my-pack` said "no course.yaml in this directory"
    out = io.StringIO()
    assert validate([pack.parent], out) == 0, out.getvalue()
    assert f"{pack}: 2 modules in the course" in out.getvalue()
    (tmp_path / "two").mkdir()
    for name in ("a", "b"):
        (tmp_path / "two" / name).mkdir()
        (tmp_path / "two" / name / "course.yaml").write_text("title: x\n")
    out = io.StringIO()
    assert validate([tmp_path / "two"], out) == 1 and "several inside" in out.getvalue()


@pytest.mark.slow
def test_a_scaffolded_module_passes_check(pack):
    out = io.StringIO()
    assert check([pack / "01_first_steps.yaml"], out) == 0, out.getvalue()
    assert "ok   01/row-means" in out.getvalue() and "ok   01/write-relu" in out.getvalue()
    after = io.StringIO()
    assert validate([pack], after) == 0 and "warning" not in after.getvalue()  # with check's observations


def test_refusals_write_nothing(pack, tmp_path, capsys):
    before = (pack / "course.yaml").read_text()
    assert main(["new", "module", str(pack), "--id", "02", "--title", "Again"]) == 2
    assert "already lists a module '02'" in capsys.readouterr().err
    assert main(["new", "module", str(pack), "--id", "../x", "--title", "Escape"]) == 2
    assert "module id" in capsys.readouterr().err
    assert (pack / "course.yaml").read_text() == before
    assert main(["new", "course", str(pack.parent)]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert main(["new", "module", str(tmp_path), "--id", "01", "--title", "T"]) == 2
    assert "no course.yaml" in capsys.readouterr().err


@pytest.mark.slow
def test_a_scaffolded_packs_wheel_carries_its_helpers_and_data_files(pack, tmp_path):
    """An installed copy of a pack whose labs import helpers/ or read data/ passed validate and failed every lab:
    the wheel left both out. It carries them now (built with the machine's setuptools, no network)."""
    import subprocess
    import sys
    import zipfile

    (pack / "helpers").mkdir()
    (pack / "helpers" / "shared.py").write_text("def double(x):\n    return 2 * x\n")
    (pack / "data" / "nested").mkdir(parents=True)
    (pack / "data" / "cases.json").write_text("[1, 2]\n")
    (pack / "data" / "nested" / "more.txt").write_text("x\n")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(pack.parent), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist")], check=True, timeout=300)
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"my_pack/course.yaml", "my_pack/helpers/shared.py", "my_pack/data/cases.json",
            "my_pack/data/nested/more.txt"} <= names, sorted(names)
