"""The capstone's stage labs: the reference a lab shows (and CI proves passes) is the package's
own file, so the course and `capstone/` can never drift apart. `pytorch-tutor check` proves
each starter fails its grader and the reference passes it."""

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]

# (module file, lab id) -> the capstone file that is that stage's reference
STAGES = {("32_gpt_model.yaml", "build-the-gpt"): "capstone/model.py",
          ("36_lora.yaml", "write-lora"): "capstone/lora.py"}


def lab(module_file: str, lab_id: str) -> dict:
    module = yaml.safe_load((ROOT / "lessons" / module_file).read_text(encoding="utf-8"))
    return next(d for d in module["drills"] if d["id"] == lab_id)


@pytest.mark.parametrize("stage, reference", STAGES.items(), ids=[lab_id for _, lab_id in STAGES])
def test_the_stage_lab_solution_is_the_capstone_file(stage, reference):
    drill = lab(*stage)
    assert drill["kind"] == "lab"
    assert drill["solution"] == (ROOT / reference).read_text(encoding="utf-8"), (
        f"{stage[1]}'s solution differs from {reference}: copy the file into the lab")
    # The starter keeps the reference's interface: the same classes, with TODOs where code is missing.
    interface = [line.split("(")[0] for line in drill["starter"].splitlines()
                 if line.startswith(("class ", "def "))]
    for name in interface:
        assert name in drill["solution"], f"the starter's {name} is not in {reference}"
    assert interface
    assert "TODO" in drill["starter"]
