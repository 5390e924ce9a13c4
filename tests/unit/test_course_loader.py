"""The lesson loader: strict schema, exact positions, one broken module never sinks the rest."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tutor.course.errors import LessonFileError
from tutor.course.loader import load_course, load_module_file
from tutor.course.yaml_source import load_yaml

GOOD_DRILL = """\
  - id: d1
    prompt: What is the shape?
    setup: import torch
    code: y = torch.zeros(2, 3)
    ask:
      - {expr: y.shape, kind: shape}
    explanation: zeros takes the sizes.
    hints: [count]
    wrong_answers:
      - {answer: "(3, 2)", misconception: sizes are reversed}
"""


def write_module(tmp_path: Path, body: str, name: str = "m.yaml") -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


def module_text(drills: str = GOOD_DRILL, extra: str = "") -> str:
    return f'format_version: 1\nmodule: "01"\n{extra}drills:\n{drills}'


def only_error(path: Path):
    module, errors = load_module_file(path)
    assert module is None
    assert len(errors) >= 1
    return errors[0]


def test_a_good_module_loads(tmp_path):
    module, errors = load_module_file(write_module(tmp_path, module_text()))
    assert errors == []
    assert module.id == "01"
    drill = module.drills[0]
    assert drill.asks[0].key == "y.shape" and drill.asks[0].kind == "shape"
    assert drill.wrong_answers[0].ask == "y.shape"
    assert drill.timeout == 10.0


def test_invalid_yaml_names_file_line_and_column(tmp_path):
    path = write_module(tmp_path, 'format_version: 1\nmodule: "01"\ndrills: [\n  - x: [1, 2\n')
    error = only_error(path)
    assert error.file == str(path)
    assert error.line >= 4
    assert "invalid YAML" in error.message
    assert str(error).startswith(f"{path}:{error.line}:{error.column}:")


def test_unknown_key_is_an_error_at_its_position(tmp_path):
    drills = GOOD_DRILL.replace("    hints: [count]\n", "    hints: [count]\n    hint: typo\n")
    error = only_error(write_module(tmp_path, module_text(drills)))
    assert error.field == "drills[0].hint"
    assert error.line == 12 and error.column == 5
    assert "unknown key" in error.message and "hints" in error.message


def test_duplicate_keys_are_errors(tmp_path):
    drills = GOOD_DRILL.replace("    code: y = torch.zeros(2, 3)\n",
                                "    code: y = torch.zeros(2, 3)\n    code: y = 1\n")
    error = only_error(write_module(tmp_path, module_text(drills)))
    assert error.field == "code" and "duplicate key" in error.message and error.line == 8


def test_missing_required_fields_are_named(tmp_path):
    drills = GOOD_DRILL.replace("    explanation: zeros takes the sizes.\n", "")
    error = only_error(write_module(tmp_path, module_text(drills)))
    assert error.field == "drills[0].explanation" and "missing" in error.message


def test_duplicate_drill_ids(tmp_path):
    error = only_error(write_module(tmp_path, module_text(GOOD_DRILL + GOOD_DRILL)))
    assert "duplicate drill id 'd1'" in error.message


def test_unknown_kind_and_bad_code_are_reported(tmp_path):
    drills = GOOD_DRILL.replace("kind: shape", "kind: shapes").replace("code: y = torch.zeros(2, 3)",
                                                                        "code: y = torch.zeros(2, 3")
    _, errors = load_module_file(write_module(tmp_path, module_text(drills)))
    messages = " | ".join(str(e) for e in errors)
    assert "unknown kind 'shapes'" in messages
    assert "Python syntax error" in messages


def test_wrong_answer_must_name_an_existing_ask(tmp_path):
    drills = GOOD_DRILL.replace('{answer: "(3, 2)"', '{expr: y.stride(), answer: "(3, 2)"')
    error = only_error(write_module(tmp_path, module_text(drills)))
    assert "no ask with key 'y.stride()'" in error.message


def test_long_timeout_needs_a_reason(tmp_path):
    drills = GOOD_DRILL + "    timeout: 30\n"
    error = only_error(write_module(tmp_path, module_text(drills)))
    assert "timeout_reason" in error.message


def test_format_version_mismatch(tmp_path):
    error = only_error(write_module(tmp_path, module_text().replace("format_version: 1", "format_version: 4")))
    assert error.field == "format_version" and "4" in error.message


def test_anchors_and_aliases_are_refused_quickly():
    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(20))
    started = time.perf_counter()
    with pytest.raises(LessonFileError) as info:
        load_yaml(laughs, "laughs.yaml")
    assert time.perf_counter() - started < 1.0
    assert "aliases are not allowed" in str(info.value)


def test_oversized_and_deep_yaml_are_refused():
    with pytest.raises(LessonFileError, match="larger than"):
        load_yaml("a: " + "x" * 2_000_000, "big.yaml")
    with pytest.raises(LessonFileError, match="nesting deeper"):
        load_yaml("[" * 100 + "]" * 100, "deep.yaml")


def test_custom_tags_are_refused():
    with pytest.raises(LessonFileError, match="tag"):
        load_yaml("a: !!python/object:os.system echo\n", "tag.yaml")


def test_non_utf8_file_is_reported(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"format_version: 1\nmodule: \xff\xfe\n")
    error = only_error(path)
    assert "UTF-8" in error.message


def copy_course(tmp_path: Path, mini_course_dir: Path) -> Path:
    target = tmp_path / "course"
    shutil.copytree(mini_course_dir, target)
    return target


def test_one_broken_module_does_not_stop_the_others(tmp_path, mini_course_dir):
    root = copy_course(tmp_path, mini_course_dir)
    (root / "02_second.yaml").write_text("format_version: 1\nmodule: '02'\ndrills: [oops\n")
    course = load_course(root)
    assert course.slot("01").module is not None
    assert course.slot("04").module is not None
    broken = course.slot("02")
    assert broken.is_broken and broken.module is None
    assert broken.errors[0].file.endswith("02_second.yaml")


def test_course_graph_errors(tmp_path, mini_course_dir):
    root = copy_course(tmp_path, mini_course_dir)
    text = (root / "course.yaml").read_text()
    text = text.replace('requires: [], title: "First steps"', 'requires: ["04"], title: "First steps"')
    text = text.replace('requires: ["03"], title: "After', 'requires: ["03", "99"], title: "After')
    text = text.replace("file: 04_after.yaml", "file: missing.yaml")
    (root / "course.yaml").write_text(text)
    course = load_course(root)
    messages = " | ".join(str(e) for e in course.errors)
    assert "cycle" in messages
    assert "unknown module '99'" in messages
    assert "'missing.yaml' does not exist" in messages
    assert all(str(e).startswith(str(root / "course.yaml")) for e in course.errors)


def test_module_id_must_match_course(tmp_path, mini_course_dir):
    root = copy_course(tmp_path, mini_course_dir)
    path = root / "04_after.yaml"
    path.write_text(path.read_text().replace('module: "04"', 'module: "05"'))
    course = load_course(root)
    assert course.slot("04").is_broken
    assert "course.yaml lists it as '04'" in str(course.slot("04").errors[0])


def test_duplicate_module_ids(tmp_path, mini_course_dir):
    root = copy_course(tmp_path, mini_course_dir)
    text = (root / "course.yaml").read_text().replace('id: "04"', 'id: "01"')
    (root / "course.yaml").write_text(text)
    assert "duplicate module id '01'" in " ".join(str(e) for e in load_course(root).errors)
