"""`pytorch-tutor try DRILL FILE` (issue 33 item 7): a submission judged as a learner's is, through the CLI.

The drill's own reference solution must be accepted, and each declared wrong submission rejected by the
test it names, with the words it pins shown: the same promise `check` proves, one file at a time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.cli import main
from tutor.course.loader import load_course
from tutor.locations import builtin_course_dir

COURSE = load_course(builtin_course_dir())
COURSE_PACKS = Path(__file__).resolve().parent / "packs"


def first(kind_test):
    return next((m, d) for m in COURSE.modules() for d in m.drills
                if kind_test(d) and d.wrong_submissions and not d.files and not d.stages and not d.needs)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["repair", "lab"])
def test_the_reference_is_accepted_and_a_declared_wrong_submission_rejected(kind, tmp_path, capsys):
    module, drill = first((lambda d: d.is_repair and not d.is_first_divergence) if kind == "repair"
                          else (lambda d: d.is_exercise))
    ref = f"{module.id}/{drill.id}"
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(drill.solution)
    wrong = drill.wrong_submissions[0]
    bad.write_text(wrong.code)

    assert main(["try", ref, str(good)]) == 0, capsys.readouterr().out
    assert f"verdict: accepted — {ref}" in capsys.readouterr().out

    assert main(["try", ref, str(bad)]) == 1
    out = capsys.readouterr().out
    assert "verdict: rejected" in out and wrong.says in out
    if kind == "lab":
        assert f"first failing test: {wrong.test}" in out


def test_try_refuses_what_it_cannot_judge(tmp_path, capsys):
    code = tmp_path / "x.py"
    code.write_text("x = 1\n")
    prediction = next(d for m in COURSE.modules() for d in m.drills if not (d.is_repair or d.is_exercise))
    assert main(["try", prediction.id, str(code)]) == 2
    assert "prediction drill" in capsys.readouterr().err
    assert main(["try", "no-such-drill", str(code)]) == 2
    assert "no drill 'no-such-drill'" in capsys.readouterr().err
    binary = tmp_path / "b.py"
    binary.write_bytes(b"\xff\xfe\x00")
    repair = next(d for m in COURSE.modules() for d in m.drills if d.is_repair)
    assert main(["try", repair.id, str(binary)]) == 2
    assert "not UTF-8" in capsys.readouterr().err


@pytest.mark.slow
def test_a_variant_drill_is_judged_on_the_instance_named_and_says_which(tmp_path, capsys):
    pack = COURSE_PACKS / "numpy100-torch"
    fix = tmp_path / "fix.py"
    fix.write_text("a = torch.arange(8).reshape(4, 2)\na[[1, 3]] = a[[3, 1]]\n")  # swaps rows 1 and 3
    assert main(["try", "01/swap-rows", str(fix), str(pack), "--instance", "i=1,j=3"]) == 0
    assert "instance: i=1, j=3" in capsys.readouterr().out
    assert main(["try", "01/swap-rows", str(fix), str(pack)]) == 1  # the instance it is loaded as: rows 0 and 2
    assert "instance: i=0, j=2 (--instance chooses another)" in capsys.readouterr().out
    assert main(["try", "01/swap-rows", str(fix), str(pack), "--instance", "i=9"]) == 2
    assert "is not one of the drill's instances" in capsys.readouterr().err


@pytest.mark.slow
def test_a_symptoms_first_repair_is_judged_as_any_repair(tmp_path, capsys):
    pack = Path(__file__).resolve().parent / "fixtures" / "symptoms_course"
    drill = load_course(pack).modules()[0].drill("settles-or-not")
    assert drill.symptoms_first
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(drill.solution)
    bad.write_text(drill.wrong_submissions[0].code)
    assert main(["try", "01/settles-or-not", str(good), str(pack)]) == 0, capsys.readouterr().out
    assert "verdict: accepted — 01/settles-or-not" in capsys.readouterr().out
    assert main(["try", "01/settles-or-not", str(bad), str(pack)]) == 1
    out = capsys.readouterr().out
    assert "verdict: rejected" in out and drill.wrong_submissions[0].says in out
