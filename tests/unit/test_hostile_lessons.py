"""Hostile lesson packs: ids that name paths, files outside the course, YAML built to exhaust the loader.

Each test here failed before the fix it pins (the security review's "critical" and "low" items).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.course.errors import LessonFileError
from tutor.course.loader import load_course, load_module_file
from tutor.course.schema import parse_module
from tutor.course.yaml_source import MAX_DEPTH, load_yaml
from tutor.locations import inside
from tutor.workspace import Workspace, ensure_starter, exercise_path, reset_exercise

LAB = """\
  - id: {drill_id}
    prompt: Write it.
    starter: |
      x = 1
    check: |
      assert x == 2, "x should be 2"
    solution: |
      x = 2
    explanation: set it.
    hints: [two]
"""


def module(module_id: str = '"01"', drill_id: str = "lab") -> str:
    return f"format_version: 1\nmodule: {module_id}\ndrills:\n" + LAB.format(drill_id=drill_id)


def errors_of(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    loaded, errors = load_module_file(path)
    assert loaded is None
    return [str(e) for e in errors]


@pytest.mark.parametrize("bad", ["../../../venv/lib/python3.11/site-packages/opt", "/etc/cron.d/x", "a/b",
                                 "..", "x..y", ".hidden", "-flag", "", "a b", "é", "x" * 65])
def test_unsafe_drill_ids_are_refused_with_file_and_line(tmp_path, bad):
    errors = errors_of(tmp_path, module(drill_id=f'"{bad}"'))
    assert any(":4:" in e and "drills[0].id" in e for e in errors), errors


@pytest.mark.parametrize("bad", ['"../../x"', '"/abs"', '"a/b"'])
def test_unsafe_module_ids_are_refused(tmp_path, bad):
    errors = errors_of(tmp_path, module(module_id=bad))
    assert any(":2:" in e and "module" in e and "not allowed" in e for e in errors), errors


def test_drill_ids_that_name_the_same_workspace_file_are_refused(tmp_path):
    text = module(drill_id="scatter-add") + LAB.format(drill_id="scatter_add")
    errors = errors_of(tmp_path, text)
    assert any("names the same file as 'scatter-add'" in e for e in errors), errors


def test_safe_ids_still_load(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(module(drill_id="v2.lab_one-ok"))
    loaded, errors = load_module_file(path)
    assert errors == [] and loaded.drills[0].id == "v2.lab_one-ok"


def course(tmp_path: Path, file_field: str, module_id: str = '"01"') -> Path:
    (tmp_path / "course.yaml").write_text(
        "format_version: 1\ntitle: T\nparts:\n  - {id: p, title: P}\nmodules:\n"
        f"  - {{id: {module_id}, part: p, requires: [], title: M, file: {file_field}}}\n")
    return tmp_path


@pytest.mark.parametrize("bad", ["../outside.yaml", "/etc/passwd", "sub/../../outside.yaml", "./m.yaml"])
def test_course_files_outside_the_course_or_odd_are_refused(tmp_path, bad):
    root = tmp_path / "course"
    root.mkdir()
    (tmp_path / "outside.yaml").write_text(module())
    loaded = load_course(course(root, f'"{bad}"'))
    assert loaded.modules() == []
    assert any("course.yaml:6" in str(e) and "file" in str(e) for e in loaded.all_errors()), loaded.all_errors()


def test_a_module_file_that_links_outside_the_course_is_refused(tmp_path):
    root = tmp_path / "course"
    root.mkdir()
    (tmp_path / "outside.yaml").write_text(module())
    (root / "m.yaml").symlink_to(tmp_path / "outside.yaml")
    loaded = load_course(course(root, "m.yaml"))
    assert loaded.modules() == []
    assert any("outside the course directory" in str(e) for e in loaded.all_errors())


def test_unsafe_course_module_id_is_refused(tmp_path):
    (tmp_path / "m.yaml").write_text(module())
    loaded = load_course(course(tmp_path, "m.yaml", module_id='"../x"'))
    assert loaded.slots == []
    assert any("not allowed" in str(e) for e in loaded.errors)


# ---------------------------------------------------------------- the workspace (the UI-side write)


class _Drill:
    def __init__(self, drill_id: str):
        self.id, self.title, self.starter = drill_id, "t", "x = 1\n"


def test_exercise_paths_never_leave_the_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTORCH_TUTOR_HOME", str(tmp_path / "home"))
    target = tmp_path / "site-packages"
    target.mkdir()
    for module_id, drill_id in [("../../../site-packages/opt", "einsum"), ("/abs", "x"), ("01", "../../evil"),
                                ("01", "a/b"), ("..", "x")]:
        with pytest.raises(ValueError):
            ensure_starter(Workspace("default", "pytorch-tutor"), module_id, _Drill(drill_id))
        with pytest.raises(ValueError):
            reset_exercise(Workspace("default", "pytorch-tutor"), module_id, _Drill(drill_id))
    assert list(target.iterdir()) == []
    assert not list(tmp_path.glob("**/opt_einsum.py"))
    good = exercise_path(Workspace("default", "pytorch-tutor"), "07", _Drill("micrograd-engine"))
    assert good.name == "07_micrograd_engine.py"
    assert good.parent == tmp_path / "home" / "workspace" / "default" / "courses" / "pytorch-tutor"


def test_inside_refuses_links_out_of_the_root(tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "link.py").symlink_to(tmp_path / "elsewhere.py")
    with pytest.raises(ValueError):
        inside(tmp_path / "root", "link.py")
    assert inside(tmp_path / "root", "ok.py") == tmp_path / "root" / "ok.py"


# ---------------------------------------------------------------- YAML built to exhaust the loader


@pytest.mark.parametrize("text, message", [
    ("[" * 2000 + "]" * 2000, "nesting"),
    ("a: " + "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2) + "\n", "nesting deeper"),
    ("[" + "1," * 400_000 + "1]", "too many YAML nodes"),
    ("{" + ",".join(f"k{i}: v" for i in range(60_000)) + "}", "too many YAML nodes"),
    ("a: &x [1]\nb: *x\n", "anchors and aliases"),
    ("a: !!python/object/apply:os.system [id]\n", "is not allowed"),
    ("a: 1\n---\nb: 2\n", "one YAML document"),
    ("? [k]\n: v\n", "keys must be plain names"),
])
def test_hostile_yaml_is_refused_before_it_is_built(text, message):
    with pytest.raises(LessonFileError) as info:
        load_yaml(text, "evil.yaml")
    assert message in str(info.value) and str(info.value).startswith("evil.yaml:")


def test_a_hostile_module_does_not_stop_the_rest_of_the_course(tmp_path):
    (tmp_path / "course.yaml").write_text(
        "format_version: 1\ntitle: T\nparts:\n  - {id: p, title: P}\nmodules:\n"
        '  - {id: "01", part: p, requires: [], title: A, file: a.yaml}\n'
        '  - {id: "02", part: p, requires: ["01"], title: B, file: b.yaml}\n')
    (tmp_path / "a.yaml").write_text("drills: " + "[" * 5000 + "]" * 5000)
    (tmp_path / "b.yaml").write_text(module(module_id='"02"'))
    loaded = load_course(tmp_path)
    assert [m.id for m in loaded.modules()] == ["02"]
    assert loaded.slot("01").is_broken


def test_marks_survive_the_event_builder():
    data = load_yaml("a: 1\nb:\n  - x\n  - {c: d}\n", "f.yaml")
    assert data.key_marks == {"a": (1, 1), "b": (2, 1)}
    assert data["b"].item_marks == [(3, 5), (4, 5)] and data["b"][1].mark == (4, 5)
    assert parse_module(load_yaml(module(), "m.yaml"), "m.yaml")[0].drills[0].id == "lab"
