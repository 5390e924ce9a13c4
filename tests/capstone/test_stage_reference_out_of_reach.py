"""A stage lab cannot be passed with its reference's code, by any route its learner process has.

The text rule (``forbid_modules``) refuses an import of the reference; the sandbox hides the
reference's files from the lab's learner process (``tutor/sandbox/hidden_modules.py``), so a
submission that reads the reference from disk and runs it as its own (no import statement at
all) fails too. Through the tutoring service's lab path, on the session's real sandbox.
"""

from __future__ import annotations

import asyncio

import pytest

from tutor.course.loader import load_course
from tutor.judge import labs
from tutor.locations import builtin_course_dir
from tutor.tutoring.service import TutoringService
from tutor.tutoring.states import Outcome

pytestmark = pytest.mark.slow

COURSE = load_course(builtin_course_dir())

# The reference read as text and executed under the learner's file: before the sandbox hid it,
# this passed 30/write-bpe and 36/write-lora with every test green (checked by switching the hiding off).
EXEC_THE_REFERENCE = '''
import capstone, os
with open(os.path.join(capstone.__path__[0], {name!r})) as _f:
    exec(compile(_f.read(), {name!r}, "exec"))
'''

LABS = {"30/write-bpe": "bpe.py", "32/build-the-gpt": "model.py", "36/write-lora": "lora.py"}


@pytest.mark.parametrize("ref", LABS)
def test_running_the_reference_read_from_disk_does_not_pass_the_lab(ref, shared_sandbox):
    module_id, drill_id = ref.split("/")
    drill = next(d for m in COURSE.modules() if m.id == module_id for d in m.drills if d.id == drill_id)
    code = EXEC_THE_REFERENCE.format(name=LABS[ref])
    report = asyncio.run(TutoringService(None, shared_sandbox).check_lab(
        module_id, drill, code, 0.0, labs.reference_files(drill)))
    said = f"{report.outcome}: {report.error or report.message}"
    assert report.outcome is not Outcome.SOLVED, said
    assert "PermissionError" in report.error, said
