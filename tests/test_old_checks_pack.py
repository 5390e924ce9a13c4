"""A pack written before checks moved to a judge process keeps working (issue 33, compatibility).

``tests/fixtures/old_checks_pack`` is format 1 as authors wrote it then: no course id, and labs and a
repair whose checks call the learner's functions and classes directly (``assert band(x) == ...``,
``Value(2.0) * Value(-3.0)``, ``train_step(model, opt, batch)`` on setup's model). Those failed with
"NameError: 'band' lives only in the learner's process" once checks ran in the judge; the learner's
process now answers the judge's calls (``tutor/sandbox/inner/remote.py``), so they run unchanged,
and a wrong submission is still rejected by the check, in the judge.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from tutor.commands.authoring import check, validate
from tutor.cli import main

PACK = Path(__file__).resolve().parent / "fixtures" / "old_checks_pack"


def test_the_old_pack_validates_with_its_missing_id_derived():
    out = io.StringIO()
    assert validate([PACK], out) == 0, out.getvalue()
    assert "no `id:`" in out.getvalue() and "error" not in out.getvalue().lower()


@pytest.mark.slow
def test_the_old_packs_checks_call_the_learners_code_and_pass():
    out = io.StringIO()
    assert check([PACK], out) == 0, out.getvalue()
    for drill in ("band-lab", "value-engine", "step-repair"):
        assert f"ok   01/{drill}" in out.getvalue(), out.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("drill, wrong, says", [
    ("band-lab", "def band(x, lo, hi):\n    return x.clamp_(lo, hi)\n", "band() changed its input"),
    ("value-engine", None, "grads (0.0, 0.0)"),
    ("step-repair", "def train_step(model, opt, batch):\n    opt.zero_grad()\n    loss = model(batch).pow(2).mean()\n"
                    "    loss.backward()\n    return loss.item()\n", "the weights did not move"),
], ids=["in-place-band", "backward-without-order", "no-step"])
def test_a_wrong_submission_is_rejected_by_the_old_check(drill, wrong, says, tmp_path, capsys):
    if wrong is None:  # a backward that seeds the output and stops: the parents' grads never fill
        starter = yaml.safe_load((PACK / "01_calls.yaml").read_text())["drills"][1]["starter"]
        wrong = starter.replace("def backward(self):\n        pass", "def backward(self):\n        self.grad = 1.0")
    path = tmp_path / "mine.py"
    path.write_text(wrong)
    assert main(["try", f"01/{drill}", str(path), str(PACK)]) == 1
    out = capsys.readouterr().out
    assert "verdict: rejected" in out and says in out, out
