"""No judged drill of the built-in course passes on a forged export with its bug in place.

A repair's or a lab's learner process exports what its code computed as data, and the judge's
process binds that data over its own setup before the check runs (``inner/exchange/``). The
learner's process owns the exporter: its code can replace it. Each forger below is learner code
that leaves the drill's bug in place (the repair's seeded code, a lab's first listed wrong
submission, else its starter) and tampers with the export on its way out:

* ``constants``: a stand-in exchange module in ``sys.modules`` (and in the runner) exports every
  UPPER_CASE name setup bound emptied (``{}``, ``[]``, ``0``, ``""``, empty tensors), plus names
  nobody declared. (Emptied test tables made 15/reordered-optimizer-load and 20/tagged-subclass
  pass before the judge decided what it binds.)
* ``unchanged``: the module's ``export`` monkeypatched to claim every name setup bound as "setup's,
  untouched" (the judge would keep its pristine setup values) and to drop ``raised``;
* ``omitted``: ``json.dumps`` as the exchange's learner side sees it, patched to leave out every name
  setup bound and ``raised`` (the judge used to delete what the export omitted).

Each runs through the tutoring service's repair / lab path on the session's real sandbox, and
must come back "check fails" with the forger's mark in the output (so the tamper did run).
The sweep over every judged drill is slow (``-m slow``), one forger per drill in turn; a handful run
in the fast lane under all three.
"""

from __future__ import annotations

import ast
import asyncio
import collections
import os
import time

import pytest

from tutor.course.loader import load_course
from tutor.judge import labs
from tutor.locations import builtin_course_dir
from tutor.tutoring.service import TutoringService
from tutor.tutoring.states import Outcome

COURSE = load_course(builtin_course_dir())
JUDGED = {f"{m.id}/{d.id}": (m, d) for m in COURSE.modules() for d in m.drills if d.is_repair or d.is_exercise}
MODES = ("constants", "unchanged", "omitted")
# the fast lane's handful: the two drills the forging was shown on, a lab with a wrong submission,
# a lab graded by one check, a first-divergence repair
FAST = ("15/reordered-optimizer-load", "20/tagged-subclass", "30/write-bpe", "15/adamw-by-hand",
        "13/rolled-targets")
MARK = "FORGER-EXPORTED"

FORGER = '''
def __forge(mode, setup_names):
    import json, sys, types
    import torch
    exchange = sys.modules["tutor.sandbox.inner.exchange"]
    runner = sys.modules["tutor.sandbox.inner.runner"]
    real_export, real_dumps = exchange.export, json.dumps

    def emptied(value):
        if isinstance(value, torch.Tensor):
            return value.new_zeros((0,) * max(value.dim(), 1))
        for kind in (dict, list, tuple, set, frozenset, str, bytes):
            if isinstance(value, kind):
                return kind()
        if isinstance(value, (bool, int, float)):
            return type(value)(0)
        return value

    def tamper(doc):
        print("%(mark)s", mode)
        names = doc["names"]
        names.pop("raised", None)
        for name in setup_names:
            if mode == "unchanged":
                names[name] = {"k": "from_setup"}
            else:
                names.pop(name, None)
        return doc

    if mode == "constants":
        def export(namespace, setup_ids, torch):
            print("%(mark)s", mode)
            forged = dict(namespace)
            for name in setup_names:
                if name.isupper() and name in forged:
                    forged[name] = emptied(forged[name])
            forged.update(forged_extra=[0], undeclared_total=0.0)
            # none of the constants marked as setup's: every one goes out as (emptied) data
            return real_export(forged, {n: i for n, i in setup_ids.items() if not n.isupper()}, torch)

        stand_in = types.ModuleType(exchange.__name__)
        stand_in.__dict__.update(exchange.__dict__)
        stand_in.export = export
        sys.modules[exchange.__name__] = stand_in
        runner.exchange = stand_in
    elif mode == "unchanged":
        exchange.export = lambda namespace, setup_ids, torch: real_dumps(
            tamper(json.loads(real_export(namespace, setup_ids, torch)))).encode()
    else:
        def dumps(obj, *args, **kwargs):
            if isinstance(obj, dict) and set(obj) == {"names", "storages"}:
                obj = tamper(obj)
            return real_dumps(obj, *args, **kwargs)

        learner_side = sys.modules["tutor.sandbox.inner.exchange.learner"]  # where export writes its JSON
        learner_side.json = types.SimpleNamespace(**{**vars(json), "dumps": dumps})


__forge("%(mode)s", {n for n in globals() if not n.startswith("__")})
del __forge
'''


def forged(mode: str, buggy: str) -> str:
    """The drill's buggy code with a forger in front of it (after its docstring and ``__future__`` imports)."""
    head = 0
    for node in ast.parse(buggy).body:
        if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"
                or isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            break
        head = node.end_lineno
    lines = buggy.splitlines(keepends=True)
    return "".join(lines[:head]) + FORGER % {"mode": mode, "mark": MARK} + "".join(lines[head:])


def buggy_input(drill) -> tuple[str, dict[str, str] | None]:
    """The bug in place: a repair's seeded code; a lab's first wrong submission, else its starter."""
    if drill.is_exercise and drill.wrong_submissions:
        wrong = drill.wrong_submissions[0]
        return wrong.code, {**labs.reference_files(drill), **dict(wrong.files)}
    return drill.code, None


async def forge(service: TutoringService, module, drill, mode: str):
    code, files = buggy_input(drill)
    code = forged(mode, code)
    if drill.is_exercise:
        return await service.check_lab(module.id, drill, code, 0.0, files)
    return await service.submit_repair(module.id, drill, code, 0.0)


@pytest.fixture(scope="session")
def forged_reports(request, shared_sandbox) -> dict:
    """{(drill ref, mode): report} for the drills this session selected, run concurrently (one per core)."""
    wanted = sorted({(item.callspec.params["drill"], item.callspec.params["mode"]) for item in request.session.items
                     if getattr(item, "originalname", "") == "test_a_forged_export_does_not_pass"})
    service = TutoringService(None, shared_sandbox)
    gate = asyncio.Semaphore(max(1, os.cpu_count() or 1))

    async def one(ref: str, mode: str):
        async with gate:
            return (ref, mode), await forge(service, *JUDGED[ref], mode)

    async def every():
        return dict(await asyncio.gather(*(one(ref, mode) for ref, mode in wanted)))

    started = time.perf_counter()
    reports = asyncio.run(every())
    outcomes = collections.Counter(str(r.outcome) for r in reports.values())
    print(f"\nforged exports: {len(wanted)} runs over {len({r for r, _ in wanted})} judged drills "
          f"in {time.perf_counter() - started:.1f} s ({dict(outcomes)})")
    return reports


def _params():
    """The fast lane's drills under every forger; every other judged drill under one, the forgers taking
    turns down the course (a third of the runs: the whole suite keeps to CI's budget). What each forger
    tampers with is proved on its own in tests/sandbox/test_sandbox_judged.py."""
    for i, ref in enumerate(JUDGED):
        for mode in (MODES if ref in FAST else (MODES[i % len(MODES)],)):
            marks = () if ref in FAST else (pytest.mark.slow,)
            yield pytest.param(ref, mode, id=f"{ref}-{mode}", marks=marks)


@pytest.mark.parametrize(("drill", "mode"), list(_params()))
def test_a_forged_export_does_not_pass(drill, mode, forged_reports):
    report = forged_reports[drill, mode]
    said = f"{drill} [{mode}]: {report.outcome} {report.check} {report.check_message[:300]!r} {report.message!r}"
    assert report.outcome not in (Outcome.REPAIRED, Outcome.REPAIRED_PREDICT_NEXT, Outcome.SOLVED), said
    if report.outcome is not Outcome.NOT_FINISHED:  # a run past its limit on a loaded machine never passes
        assert report.outcome is Outcome.CHECK_FAILS, said
        assert MARK in report.output, f"the forger never ran: {said}\n{report.output[-500:]}"


def test_every_judged_drill_is_forged():
    assert len(JUDGED) > 100 and all(ref in JUDGED for ref in FAST)
    forged = collections.defaultdict(set)
    for param in _params():
        forged[param.values[0]].add(param.values[1])
    assert set(forged) == set(JUDGED) and all(forged[ref] == set(MODES) for ref in FAST)
    assert {mode for modes in forged.values() for mode in modes} == set(MODES)
