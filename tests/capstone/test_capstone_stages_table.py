"""capstone/stages.py is the one table of stage labs: which lab writes which module of the package.

`--package mine` and the map read it, so a stage lab the table does not list would never run on
the learner's package, and a listed lab that is gone would silently be the reference.
"""

import functools
from pathlib import Path

import yaml

from capstone.stages import STAGE_LABS, stage_for_lab

from tests.capstone.stage_files import package_text

ROOT = Path(__file__).resolve().parents[2]


@functools.cache  # parsing the 38 files with PyYAML's pure-Python reader takes seconds: once per run
def course_labs() -> dict[tuple[str, str], dict]:
    course = yaml.safe_load((ROOT / "lessons" / "course.yaml").read_text(encoding="utf-8"))
    labs = {}
    for slot in course["modules"]:
        path = ROOT / "lessons" / slot["file"]
        if path.exists():
            for drill in yaml.safe_load(path.read_text(encoding="utf-8")).get("drills", []):
                if drill.get("kind") == "lab" or "starter" in drill:
                    labs[(slot["id"], drill["id"])] = drill
    return labs


def test_every_listed_stage_is_a_lab_of_the_course_whose_reference_is_the_package_file():
    labs = course_labs()
    for row in STAGE_LABS:
        if row.lab is None:
            continue
        drill = labs.get((row.course_module, row.lab))
        assert drill is not None, f"capstone/stages.py lists {row.lab_ref}, which is not a lab of the course"
        package_file = ROOT / "capstone" / f"{row.module}.py"
        if package_file.exists():  # stage 9's scale.py has no module of its own in the reference
            by_id = {lab_id: d for (_, lab_id), d in labs.items()}
            assert package_text(row.lab, drill, by_id) == package_file.read_text(encoding="utf-8"), (
                f"{row.lab_ref}'s solution differs from capstone/{row.module}.py")


def test_every_capstone_stage_lab_is_in_the_table():
    for (module_id, lab_id), drill in course_labs().items():
        if "capstone-stage" in drill.get("tags", []):
            assert stage_for_lab(module_id, lab_id) is not None, (
                f"{module_id}/{lab_id} is tagged capstone-stage: add it to capstone/stages.py (STAGE_LABS), "
                "so that `capstone --package mine` and the map use it")
