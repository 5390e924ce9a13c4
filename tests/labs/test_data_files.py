"""A course's data files for labs and drills: named by a checked relative name, contained, capped, served read-only."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tutor.course import data_files, grants
from tutor.course.loader import load_course
from tutor.grading import request_for

PACK = Path(__file__).resolve().parent.parent / "fixtures" / "puzzle_labs"


def pack_with(tmp_path: Path, names: str) -> tuple[Path, int]:
    """The puzzle pack with the rowsum lab's `data:` replaced by ``names``; the line it is written on."""
    root = tmp_path / "pack"
    shutil.copytree(PACK, root)
    module = root / "01_puzzles.yaml"
    text = module.read_text()
    old = "    data: [rowsum_cases.json]\n"
    assert old in text
    module.write_text(text.replace(old, f"    data: {names}\n"))
    line = text[:text.index(old)].count("\n") + 1
    return root, line


def errors_of(root: Path):
    return [e for e in load_course(root, str(root)).all_errors()]


def test_the_pack_serves_its_data_file_to_the_drill_that_names_it():
    course = load_course(PACK)
    assert not course.all_errors(), course.all_errors()
    rowsum = course.slot("1").module.drill("rowsum")
    served = dict(rowsum.helpers)[data_files.MODULE]
    assert str((PACK / "data" / "rowsum_cases.json").resolve()) in served
    assert data_files.MODULE in dict(request_for(rowsum).modules)  # both halves of a judged run get it
    assert data_files.MODULE in dict(request_for(rowsum).judge_modules)
    assert data_files.MODULE not in dict(course.slot("1").module.drill("ones").helpers)
    # the sandbox shows the data directory (only), read-only
    assert (PACK / "data").resolve() in grants.code_dirs(PACK)


@pytest.mark.parametrize("names, says", [
    ("[missing.json]", "no such file in the course's data/ directory"),
    ("[../course.yaml]", "no '..'"),
    ("[/etc/passwd]", "not an absolute path"),
    ("[.hidden]", "hidden files"),
    ("[rowsum_cases.json, rowsum_cases.json]", "listed twice"),
    ("[]", "list at least one file"),
])
def test_a_bad_name_is_refused_at_its_line(tmp_path, names, says):
    root, line = pack_with(tmp_path, names)
    errors = errors_of(root)
    assert len(errors) == 1, errors
    assert errors[0].file.endswith("01_puzzles.yaml") and errors[0].line == line and says in errors[0].message


def test_a_link_out_of_data_is_refused_after_resolving_it(tmp_path):
    root, line = pack_with(tmp_path, "[secret.txt, inner/escape.txt]")
    (tmp_path / "outside.txt").write_text("a solution")
    (tmp_path / "escape.txt").write_text("another")
    (root / "data" / "secret.txt").symlink_to(tmp_path / "outside.txt")
    (root / "data" / "inner").symlink_to(tmp_path)
    messages = [e.message for e in errors_of(root)]
    assert len(messages) == 2 and all("resolves outside the course's data/ directory" in m for m in messages)
    assert all(e.line == line for e in errors_of(root))


def test_a_data_directory_that_links_out_of_the_course_is_neither_used_nor_shown(tmp_path):
    root, _ = pack_with(tmp_path, "[rowsum_cases.json]")
    outside = tmp_path / "elsewhere"
    shutil.move(root / "data", outside)
    (root / "data").symlink_to(outside)
    messages = [e.message for e in errors_of(root)]
    assert any("data/ resolves outside the course directory" in m for m in messages)
    assert grants.code_dirs(root) == []


def test_size_caps(tmp_path, monkeypatch):
    root, line = pack_with(tmp_path, "[rowsum_cases.json]")
    monkeypatch.setattr(data_files, "MAX_FILE_BYTES", 16)
    errors = errors_of(root)
    assert len(errors) == 1 and errors[0].line == line and "a data file is at most" in errors[0].message
    monkeypatch.setattr(data_files, "MAX_FILE_BYTES", 1 << 20)
    monkeypatch.setattr(data_files, "MAX_COURSE_BYTES", 16)
    assert any("the cap is" in e.message for e in errors_of(root))


def test_a_course_without_data_says_so_at_the_name(tmp_path):
    root, line = pack_with(tmp_path, "[rowsum_cases.json]")
    shutil.rmtree(root / "data")
    errors = errors_of(root)
    assert len(errors) == 1 and errors[0].line == line and "has no data/ directory" in errors[0].message


def test_the_served_module_gives_declared_files_only(tmp_path):
    target = tmp_path / "cases.json"
    target.write_text("[1, 2]")
    namespace: dict = {}
    exec(compile(data_files.module_source({"cases.json": str(target)}), "course_files", "exec"), namespace)
    assert namespace["read_text"]("cases.json") == "[1, 2]" and namespace["read_bytes"]("cases.json") == b"[1, 2]"
    with pytest.raises(FileNotFoundError, match="not one of this drill's data files"):
        namespace["path"]("../course.yaml")


def test_format_1_has_no_data_key(tmp_path):
    root, _ = pack_with(tmp_path, "[rowsum_cases.json]")
    module = root / "01_puzzles.yaml"
    module.write_text(module.read_text().replace("format_version: 2", "format_version: 1", 1))
    assert any(os.path.basename(e.file) == "01_puzzles.yaml" for e in errors_of(root))
