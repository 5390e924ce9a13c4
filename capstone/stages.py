"""Which capstone module each stage lab writes: the one table `--package mine` and the map read.

A stage lab (modules 30-38 of the course) has the learner write one file of this package;
`pytorch-tutor capstone <command> --package mine` runs the command on a package assembled
from the learner's files, with this package's module standing in for a stage the learner
switched to its reference or has not written yet. A row whose lab is None has no stage lab
yet: that module is always the reference. Adding a stage lab is adding its id here (and its
module's file stays the lab's reference solution: tests/capstone/test_capstone_stage_labs.py).

Torch-free, like the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StageLab:
    module: str  # the package module the lab's file becomes: capstone.<module>
    stage: int  # the stage number the labs' prompts use ("Stage 4 of your package")
    course_module: str  # the course module the lab belongs to
    lab: str | None  # the lab's drill id, None while the stage has no lab (always the reference)

    @property
    def lab_ref(self) -> str | None:
        """`<module>/<lab>`, as a chained lab's `uses:` names it."""
        return f"{self.course_module}/{self.lab}" if self.lab else None


STAGE_LABS: tuple[StageLab, ...] = (
    StageLab("bpe", 2, "30", "write-bpe"),
    StageLab("data", 3, "31", "write-data"),
    StageLab("model", 4, "32", "build-the-gpt"),
    StageLab("train", 5, "33", "write-trainer"),
    StageLab("evaluate", 6, "34", "write-the-evaluation"),
    StageLab("generate", 7, "35", "write-the-kv-cache"),
    StageLab("lora", 8, "36", "write-lora"),
    StageLab("scale", 9, "37", "scale-your-gpt"),  # not run by a command: the check of module 37
    StageLab("export", 10, "38", "write-the-export"),
    StageLab("quantize", 10, "38", "write-the-int8"),
    StageLab("serve", 10, "38", "write-the-server"),
)


def stage_for_lab(course_module: str, lab: str) -> StageLab | None:
    """The stage a lab writes, or None when the lab is not a capstone stage."""
    return next((s for s in STAGE_LABS if s.course_module == course_module and s.lab == lab), None)
