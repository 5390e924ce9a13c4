"""`pytorch-tutor migrate` (issue 33): a pack's files rewritten in a newer format, meaning exactly what they meant."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

from tutor.commands.authoring import migrate, validate
from tutor.course.loader import load_course
from tutor.course.migrate import migrate_file

FROZEN = Path(__file__).resolve().parents[1] / "fixtures" / "frozen_pack"


def kinds(course_dir: Path) -> dict:
    course = load_course(course_dir)
    assert not course.all_errors(), course.all_errors()
    return {(m.id, d.id): (d.kind, d.asks, d.solution, d.check, d.tests) for m in course.modules() for d in m.drills}


def test_the_frozen_pack_migrates_to_each_newer_format_and_means_the_same(tmp_path):
    pack = tmp_path / "pack"
    shutil.copytree(FROZEN, pack)
    before = kinds(pack)
    originals = {p.name: p.read_bytes() for p in pack.glob("*.yaml")}
    out = io.StringIO()
    assert migrate([pack], 2, dry_run=True, backup=True, out=out) == 0
    assert "02_second.yaml: would go from format 1 to 2" in out.getvalue()
    assert {p.name: p.read_bytes() for p in pack.glob("*.yaml")} == originals  # a dry run writes nothing
    for target in (2, 3):
        out = io.StringIO()
        assert migrate([pack], target, dry_run=False, backup=True, out=out) == 0, out.getvalue()
        assert kinds(pack) == before
        check = io.StringIO()
        assert validate([pack], check) == 0, check.getvalue()
    text = (pack / "02_second.yaml").read_text()
    assert text.startswith("format_version: 3") and "    kind: repair\n" in text
    assert (pack / "02_second.yaml.format1").read_bytes() == originals["02_second.yaml"]  # the original, kept
    assert migrate_file(pack / "02_second.yaml", 3).problem == "already format 3"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return path


def test_text_with_double_braces_is_not_moved_to_format_3(tmp_path):
    path = write(tmp_path, 'format_version: 2\nmodule: "01"\ndrills:\n  - id: p\n    prompt: p\n    code: |\n'
                           '      s = {{1: 2}.get(1)}\n    ask:\n      - {expr: s, kind: int}\n    explanation: e\n'
                           '    hints: [h]\n    wrong_answers: [{answer: "3", misconception: m}]\n')
    before = path.read_bytes()
    result = migrate_file(path, 3)
    assert "line 7 holds '{{'" in result.problem and result.after == 2
    assert path.read_bytes() == before and not list(tmp_path.glob("*.format*"))


def test_a_file_that_cannot_be_rewritten_safely_is_left_as_it_is(tmp_path):
    flow = write(tmp_path, 'format_version: 1\nmodule: "01"\ndrills:\n  - {id: r, prompt: p, code: "y = 1", '
                           'solution: "y = 2", check: "assert y == 2", ask: [{expr: y, kind: int}], '
                           'explanation: e, hints: [h], wrong_answers: [{answer: "3", misconception: m}]}\n')
    before = flow.read_bytes()
    result = migrate_file(flow, 2)
    assert "not written as a block mapping" in result.problem and "kind: repair" in result.problem
    assert flow.read_bytes() == before
    broken = write(tmp_path, 'format_version: 1\nmodule: "01"\ndrills: []\n')
    assert "does not validate now" in migrate_file(broken, 2).problem
    out = io.StringIO()
    assert migrate([broken], 2, dry_run=False, backup=True, out=out) == 1
    assert "not migrated" in out.getvalue()
