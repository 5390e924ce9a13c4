"""Every claim in the built-in course, executed: `pytorch-tutor check` over lessons/, one test per drill.

Each drill is its own test (``tests/test_lessons.py::test_drill_passes_check[03/view-of-transpose]``), so
a failing drill names itself and ``-k`` picks drills or modules. The runs themselves happen once, in
parallel as ``pytorch-tutor check`` runs them (one worker per core, on the session's sandbox), for the
drills this session selected; each test then reads its own drill's report.

A drill must hold on any machine, so every drill runs twice: under this machine's own CPU kernels and
threads, and under ATen's portable kernels (``ATEN_CPU_CAPABILITY=default``) on one thread, in a
second sandbox (``test_drill_decides_the_same_on_portable_kernels``). The two runs go at once: the
check leaves a core idle much of the time (process starts, pipes), and the second setting fills it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import os

import pytest

from tutor.commands.drill_proof import VARIANT_SEED, answer_changes, check_drill, expected_cost, variant_sample
from tutor.course import grants
from tutor.course.loader import load_course
from tutor.locations import builtin_course_dir
from tutor.sandbox.kernel_settings import KernelSettings

COURSE = load_course(builtin_course_dir())
DRILLS = {f"{m.id}/{d.id}": (m, d) for m in COURSE.modules() for d in m.drills}
TEST_NAMES = ("test_drill_passes_check", "test_drill_decides_the_same_on_portable_kernels")
PORTABLE = KernelSettings("default", 1)


def _check_sandbox(cache_dir, kernels=None):
    """A sandbox as a learner's tutor makes one for the built-in course: its code directories, and a compile
    cache of its own (``inner/compile_cache.py``), so that a drill's second compile of the same graph loads
    the first one's kernels, as on a learner's machine, instead of running g++ cold every time (37's lab
    compiled its GPT once per declared submission: 167 of the check's 372 s). A verdict never reads it: the
    judge's half of a run has no cache."""
    from tutor.sandbox.client import Sandbox

    box = Sandbox(read_only=grants.code_dirs(builtin_course_dir()), compile_cache=cache_dir, kernels=kernels)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(box.start_sync).result()
    return box


@pytest.fixture(scope="session")
def machine_sandbox(tmp_path_factory):
    box = _check_sandbox(tmp_path_factory.mktemp("compile-cache-machine"))
    yield box
    box.close_sync()


@pytest.fixture(scope="session")
def portable_sandbox(tmp_path_factory):
    # its own cache: kernels built for this CPU's instruction set are not the portable setting's
    box = _check_sandbox(tmp_path_factory.mktemp("compile-cache-portable"), PORTABLE)
    yield box
    box.close_sync()


@pytest.fixture(scope="session")
def check_reports(request, machine_sandbox) -> dict:
    """{(setting, drill ref): report} for the drills this session selected, under each setting it needs."""
    wanted = {(item.originalname, item.callspec.params["drill"]) for item in request.session.items
              if getattr(item, "originalname", "") in TEST_NAMES and item.callspec.params.get("drill") in DRILLS}
    machine = sorted({ref for _, ref in wanted})  # the portable run is compared with the machine's
    portable = sorted({ref for name, ref in wanted if name == TEST_NAMES[1]})
    boxes = {"machine": machine_sandbox}
    if portable:
        boxes["portable"] = request.getfixturevalue("portable_sandbox")
    cores = max(1, os.cpu_count() or 1)
    gates = {name: asyncio.Semaphore(cores) for name in boxes}
    # A drill granted exec compiles with Inductor (a C++ compiler at full tilt for 10-40 s): one at a
    # time across both settings, or two cold compiles and two other drills on two cores run past the
    # drills' own limits (observed: 37's labs stopped at 120 s on a loaded machine).
    compiling = asyncio.Semaphore(1)

    async def one(setting: str, ref: str):
        module, drill = DRILLS[ref]
        if setting == "portable" and drill.wrong_submissions:
            # The declared wrong submissions prove the grader, which the machine's run does; on the
            # portable kernels the drill's own claims are what must hold (CI budget: ~1 min of runs).
            # `check --setting default/1` still proves them there too.
            drill = dataclasses.replace(drill, wrong_submissions=())
        if setting == "portable" and drill.variants is not None:
            # Likewise a variant drill's instances: the machine's run proves every corner and sample (and
            # that the answers move); the portable run checks the instance the two settings are compared on.
            first = drill.variants.sample(VARIANT_SEED, variant_sample())[0]
            drill = dataclasses.replace(drill, variants=dataclasses.replace(drill.variants, corners=(first,),
                                                                             instances=(first,)))
        async with compiling if "exec" in drill.needs else contextlib.nullcontext():
            # the gate is taken per run of an instance: a variant drill's instances run side by side
            return (setting, ref), await check_drill(module, drill, boxes[setting], gates[setting])

    async def every():
        # Longest first (the gates admit waiting runs in the order they were made): a lab with many wrong
        # submissions, or a compile, started last would run alone at the end while a core sat idle.
        order = sorted([("machine", ref) for ref in machine] + [("portable", ref) for ref in portable],
                       key=lambda job: -expected_cost(DRILLS[job[1]][1], wrong_submissions=job[0] == "machine"))
        return dict(await asyncio.gather(*(one(setting, ref) for setting, ref in order)))

    return asyncio.run(every())


@pytest.mark.slow
@pytest.mark.parametrize("drill", list(DRILLS))
def test_drill_passes_check(drill, check_reports):
    report = check_reports["machine", drill]
    assert report.ok, f"{drill} ({report.kind}):\n" + "\n".join(report.problems)


@pytest.mark.slow
@pytest.mark.parametrize("drill", list(DRILLS))
def test_drill_decides_the_same_on_portable_kernels(drill, check_reports):
    """`check --setting machine --setting default/1`, drill by drill."""
    portable, machine = check_reports["portable", drill], check_reports["machine", drill]
    assert portable.ok, f"{drill} ({portable.kind}) under {PORTABLE.describe()}:\n" + "\n".join(portable.problems)
    if DRILLS[drill][1].wrong_submissions:  # its wrong submissions ran on the machine's kernels only
        machine = dataclasses.replace(machine, observed={k: v for k, v in machine.observed.items()
                                                         if k in portable.observed})
    changes = answer_changes(DRILLS[drill][1], machine, portable)
    assert not changes, f"{drill} decides differently under {PORTABLE.describe()}:\n" + "\n".join(changes)


def test_the_course_loads_without_errors():
    assert COURSE.all_errors() == []
    assert len(COURSE.modules()) == len(COURSE.slots)


def test_builtin_modules_meet_the_content_bar():
    for module in COURSE.modules():
        assert len(module.drills) >= 8, module.id
        assert len(module.self_checks) >= 4, module.id
        for drill in module.drills:
            assert drill.hints and drill.explanation.strip(), drill.id
            # a prediction needs a plausible wrong answer; an exercise's starter plays that part
            assert drill.wrong_answers or (drill.is_exercise and drill.starter.strip()), drill.id


def test_most_predictions_in_every_module_vary():
    """Issue 32: in every module at least 70% of the prediction drills declare variants, so review, retries and
    test-out meet fresh instances everywhere (a drill without says why in `vary:`, counted apart)."""
    from tutor.course.schema import DrillKind

    short = []
    for module in COURSE.modules():
        predictions = [d for d in module.drills if d.kind is DrillKind.PREDICTION]
        varied = sum(d.variants is not None for d in predictions)
        if predictions and varied < 0.7 * len(predictions):
            short.append(f"{module.id}: {varied} of {len(predictions)}")
    assert not short, short


def test_every_repair_and_trace_either_varies_or_says_why_not():
    """A repair's bug, or the line where a first-divergence trace departs, moves with the instance where it can;
    where it cannot, the drill's `vary:` says why (a learner repeating it would otherwise repair from memory)."""
    silent = [f"{m.id}/{d.id}" for m in COURSE.modules() for d in m.drills
              if (d.is_repair or d.is_first_divergence) and d.variants is None and not d.vary]
    assert not silent, silent
