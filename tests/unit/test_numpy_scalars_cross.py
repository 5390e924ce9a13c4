"""NumPy scalars in a traced, judged run: numbers on the trace's rows and in the judge's process.

``np.float64`` is a ``float`` subclass whose NumPy-2 ``repr`` is ``np.float64(0.0)``; the export
used to write floats as their ``repr``, so the judge failed with "could not convert string to
float". Both halves of a judged run go through the runner's body here, unconfined (through the
real sandbox: ``tests/sandbox/test_sandbox_judged.py``).
"""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from tutor.course.divergence_fields import Contract, FirstDivergence  # noqa: E402
from tutor.judge.contract_check import final_check  # noqa: E402
from tutor.sandbox.bindings import judged_names  # noqa: E402
from tutor.sandbox.inner.describe import numpy_scalar  # noqa: E402
from tutor.sandbox.inner.runner import run_request  # noqa: E402
from tutor.sandbox.wire import RunRequest, TraceSpec, read_observation  # noqa: E402

SETUP = "import torch\nimport numpy as np\nimport enum\n"


def judged(code: str, check: str, setup: str = SETUP):
    """Both halves in this process: the learner's run exports, a fresh namespace judges the data."""
    learner, exports = run_request(RunRequest(code=code, setup=setup, export=True), torch)
    assert learner.error is None, learner.error
    binds, rebinds = judged_names(RunRequest(code=code, setup=setup))  # what Sandbox.run reads from the sources
    judge, _ = run_request(RunRequest(code="", setup=setup, check=check, imports=exports.decode(), binds=binds,
                                      rebinds=rebinds), torch)
    return read_observation(judge.to_json())


def test_numpy_scalars_reach_the_judge_as_the_python_numbers_they_hold():
    code = ("a = np.float64(0.25)\nb = np.float32(2.5)\nc = np.int64(3)\nd = np.bool_(True)\n"
            "e = np.float64('nan')\nclass Level(enum.IntEnum):\n    HIGH = 7\nf = Level.HIGH\n"
            "g = np.arange(3).sum()\n")
    check = ("assert a == 0.25 and type(a) is float\nassert b == 2.5 and type(b) is float\n"
             "assert c == 3 and type(c) is int\nassert d is True\nassert e != e\nassert f == 7\nassert g == 3\n")
    obs = judged(code, check)
    assert obs.error is None, obs.error
    assert obs.check == "passed", obs.check_message


def test_a_first_divergence_contract_on_a_numpy_scalar_is_checked_in_the_judge():
    spec = FirstDivergence(contracts=(Contract("gap", finite=True), Contract("mean", range=(0.0, 1.0))))
    good = judged("gap = np.float64(0.0)\nmean = np.float32(0.5)\n", final_check(spec))
    assert good.check == "passed", good.check_message
    bad = judged("gap = np.float64('inf')\nmean = np.float32(0.5)\n", final_check(spec))
    assert bad.check == "failed" and "gap is not finite" in bad.check_message


def test_a_value_the_judge_cannot_read_is_a_clear_message_naming_it():
    setup = "import torch\n"
    learner, exports = run_request(RunRequest(code="a = 1.5\nb = 2.0\n", setup=setup, export=True), torch)
    doc = json.loads(exports)
    doc["names"]["a"] = {"k": "float", "v": "np.float64(1.5)"}  # what the old export sent
    spec = FirstDivergence(contracts=(Contract("a", finite=True),))
    judge, _ = run_request(RunRequest(code="", setup=setup, check=final_check(spec), imports=json.dumps(doc),
                                      binds=("a", "b")), torch)
    assert judge.check == "skipped" and judge.error.phase == "judge"  # nothing of the export is used
    assert judge.error.message == ("the learner's results could not be read: the value of 'a': "
                                   "'np.float64(1.5)' is not a number")


def test_a_watched_numpy_scalar_has_the_statistics_of_its_number_on_the_trace():
    obs, _ = run_request(RunRequest(code="gap = np.float32('nan')\nstep = np.int64(4)\n", setup=SETUP,
                                    trace=TraceSpec(watch=("gap", "step"))), torch)
    rows = read_observation(obs.to_json()).trace.rows
    gap, step = rows[0].names[0], rows[1].names[0]
    assert (gap.kind, gap.type, gap.nan) == ("value", "float32", 1)
    assert (step.value, step.type) == (4.0, "int64")


def test_numpy_scalar_recognises_scalars_by_their_types_module_only():
    assert numpy_scalar(np.float64(1.5)) == 1.5 and type(numpy_scalar(np.float64(1.5))) is float
    assert numpy_scalar(np.bool_(False)) is False
    assert numpy_scalar(np.array(2.0)) is None  # a 0-d array stays an array
    assert numpy_scalar(1.5) is None and numpy_scalar(torch.tensor(1.0)) is None
