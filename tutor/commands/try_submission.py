"""``pytorch-tutor try DRILL FILE``: one submission against a lab or a repair, judged as a learner's is.

For authors writing `wrong_submissions:` (and for anyone who wants a verdict without the app):
the file goes through the tutoring service's own path (``submit_repair``, ``check_lab``) with
recording off, and the report is printed the way plain mode prints it to a learner, then one
line with the verdict and, for a lab, which test rejected it (what a `wrong_submissions:` entry
names as its `test:`). The exit status is 0 when accepted, 1 when rejected, 2 when nothing ran.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Callable, TextIO

from tutor.course import grants
from tutor.course.schema import Drill, Module
from tutor.course.variants import instance_text, present_instance
from tutor.judge import labs
from tutor.tutoring.presentation import plain_lines, run_blocks
from tutor.tutoring.states import Outcome
from tutor.workspace import read_exercise

def find_drill(modules: list[Module], ref: str) -> tuple[Module, Drill] | str:
    """The drill ``ref`` (``ID`` or ``MODULE/ID``) names, or why there is none to try."""
    module_id, _, drill_id = ref.rpartition("/")
    found = [(m, d) for m in modules for d in m.drills if d.id == drill_id and module_id in ("", m.id)]
    if not found:
        return f"no drill {ref!r} in this course"
    if len(found) > 1:
        return f"{len(found)} modules have a drill {drill_id!r}: write MODULE/{drill_id}"
    module, drill = found[0]
    if not (drill.is_exercise or drill.is_repair):
        return f"{module.id}/{drill.id} is a prediction drill: `try` runs a submission against a lab or a repair"
    return module, drill


def read_submission(path: Path) -> str:
    """The submission's text, read as a learner's lab file is; ValueError saying why it cannot be used."""
    if not path.is_file():
        raise ValueError(f"there is no file {path}")
    return read_exercise(path)


def other_files(drill: Drill, given: list[str]) -> dict[str, str]:
    """A multi-file lab's other files: the references, replaced by each ``NAME=PATH`` given."""
    files = labs.reference_files(drill) if drill.is_exercise else {}
    names = {f.name for f in drill.files}
    for item in given:
        name, sep, path = item.partition("=")
        if not sep or name not in names:
            known = ", ".join(sorted(names)) or "none"
            raise ValueError(f"--file {item!r}: write NAME=PATH with NAME one of this lab's files ({known})")
        files[name] = read_submission(Path(path))
    return files


async def _judge(module: Module, drill: Drill, code: str, files: dict[str, str], options: dict):
    from tutor.sandbox.client import Sandbox
    from tutor.tutoring.service import TutoringService

    sandbox = Sandbox(**options)
    service = TutoringService(None, sandbox)  # no session: nothing is recorded
    try:
        if drill.is_exercise:
            return await service.check_lab(module.id, drill, code, 0.0, files)
        return await service.submit_repair(module.id, drill, code, 0.0)
    finally:
        await sandbox.close()


def chosen_instance(drill: Drill, wanted: str) -> Drill | str:
    """The drill as judged: its loaded instance, or the one ``wanted`` names (``h=6,dim=0``); else why not."""
    if drill.variants is None:
        return "this drill has no variants: --instance names one of a variant drill's instances" if wanted else drill
    if not wanted:
        return drill
    names = {n.strip(): v.strip() for n, _, v in (part.partition("=") for part in wanted.split(","))}
    for instance in drill.variants.instances:
        if {name: str(value).lower() for name, value in instance} == {k: v.lower() for k, v in names.items()}:
            return present_instance(drill, instance)
    shown = "; ".join(instance_text(i) for i in drill.variants.instances[:8])
    return f"--instance {wanted!r} is not one of the drill's instances (for example: {shown})"


def try_submission(course_paths: list[Path], drill_ref: str, submission: Path, out: TextIO,
                   file_args: list[str] = (), allow_grants: bool = False,
                   consent: Callable[[str], bool] | None = None, instance: str = "") -> int:
    from tutor.commands.authoring import third_party_grants_refusal
    from tutor.commands.validation import load_targets

    targets = load_targets(course_paths)
    errors = [e for t in targets for e in t.errors]
    for error in errors:
        print(error, file=out)
    found = find_drill([m for t in targets for m in t.modules], drill_ref)
    if isinstance(found, str):
        print(f"try: {found}", file=sys.stderr)
        return 2
    module, drill = found
    drill = chosen_instance(drill, instance)
    if isinstance(drill, str):
        print(f"try: {drill}", file=sys.stderr)
        return 2
    if drill.variants is not None or drill.template is not None:
        print(f"instance: {instance_text(drill.instance)} (--instance chooses another)", file=out)
    refusal = third_party_grants_refusal([t for t in targets if module in t.modules], allow_grants, consent)
    if refusal:
        print(f"pytorch-tutor: {refusal}", file=sys.stderr)
        return 2
    try:
        code = read_submission(submission)
        files = other_files(drill, list(file_args))
    except ValueError as exc:
        print(f"try: {exc}", file=sys.stderr)
        return 2
    target = next(t for t in targets if module in t.modules)
    root = target.course.root if target.course is not None else Path(target.label).parent
    report = asyncio.run(_judge(module, drill, code, files, grants.sandbox_options(root, [module])))
    for line in plain_lines(run_blocks(report)):
        print(line, file=out)
    if report.outcome == Outcome.NOT_FINISHED:
        print(f"verdict: not judged — the run did not finish ({report.message})", file=out)
        return 2
    accepted = report.outcome in (Outcome.SOLVED, Outcome.REPAIRED, Outcome.REPAIRED_PREDICT_NEXT)
    if accepted:
        print(f"verdict: accepted — {module.id}/{drill.id} would count as solved", file=out)
        return 0
    failing = [t.name for t in report.tests if not t.passed]
    by = f" (first failing test: {failing[0]}; a wrong submission names it as `test:`)" if failing else \
        " (by its check)" if drill.is_repair else ""
    print(f"verdict: rejected{by}", file=out)
    return 1
