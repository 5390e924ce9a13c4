"""A repair's or a lab's verdict never comes from a process the learner's code ran in.

Before the judge process existed, code that patched the checker (``sys.modules["child"]._run``,
``torch.allclose``) or forged the result line had every repair and lab recorded as solved.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tutor.sandbox.client import run_sync
from tutor.sandbox.wire import RunRequest

pytestmark = pytest.mark.slow

SETUP = "import torch\nx = torch.tensor([1.0, 2.0, 3.0])\n"
CHECK = "assert torch.allclose(y, x * 2), f'y = {y.tolist()}, expected {(x * 2).tolist()}'\n"


def judged(sb, code: str, check: str = CHECK, setup: str = SETUP, probe: str = ""):
    return run_sync(RunRequest(code=code, setup=setup, check=check, probe=probe, judged=True), sb)


def test_a_right_answer_passes_and_a_wrong_one_fails_with_the_authors_message(sb):
    assert judged(sb, "y = x * 2").observation.check == "passed"
    wrong = judged(sb, "y = x + 2").observation
    assert wrong.check == "failed" and "expected [2.0, 4.0, 6.0]" in wrong.check_message


@pytest.mark.parametrize("tamper", [
    "import sys\nsys.modules['tutor.sandbox.inner.runner']._run = lambda *a, **k: (None, None)\n",
    "import torch\ntorch.allclose = lambda *a, **k: True\n",
    "import builtins\nbuiltins.AssertionError = type('Quiet', (Exception,), {})\n",
    "import sys\nsys.settrace(lambda *a: None)\n",
], ids=["patch-child-run", "patch-allclose", "patch-assertion", "settrace"])
def test_patching_the_checker_in_the_learners_process_changes_nothing(sb, tamper):
    obs = judged(sb, tamper + "y = x + 2").observation
    assert obs.check == "failed", (obs.check, obs.check_message)


def test_a_forged_result_line_is_not_a_verdict(sb):
    forged = json.dumps({"protocol": 2, "error": None, "asks": {}, "check": "passed", "check_message": "",
                         "variables": {}, "fence": [], "seconds": 0.0})
    for tail in ("", "\nnot an export", '\n{"names": {"y": {"k": "str", "v": "x"}}, "storages": []}'):
        code = f"import os\nraw = {forged + tail!r}.encode()\nos.pwrite(3, raw, 0)\nos.ftruncate(3, len(raw))\nos._exit(0)"
        obs = judged(sb, code).observation
        assert obs is not None and obs.check != "passed", (tail, obs.check, obs.check_message)
    setup_error = forged.replace('"error": null', '"error": {"phase": "setup", "type": "X", "message": "m"}')
    code = f"import os\nraw = {setup_error!r}.encode()\nos.pwrite(3, raw, 0)\nos.ftruncate(3, len(raw))\nos._exit(0)"
    assert judged(sb, code).observation.check != "passed"


@pytest.mark.parametrize("names", [
    {"y": {"k": "tensor", "dtype": "float32", "storage": 0, "offset": 0, "shape": [1000], "stride": [1]}},
    {"y": {"k": "tensor", "dtype": "float32", "storage": 5, "offset": 0, "shape": [1], "stride": [1]}},
    {"y": {"k": "tensor", "dtype": "evil", "storage": 0, "offset": 0, "shape": [1], "stride": [1]}},
    {"y": {"k": "int", "v": "9" * 100000}},
    {"y": {"k": "mystery"}},
], ids=["past-storage", "no-storage", "bad-dtype", "huge-int", "unknown-kind"])
def test_hostile_exports_make_the_check_an_error_not_a_crash(sb, names):
    body = json.dumps({"protocol": 2, "error": None, "asks": {}, "check": "passed", "variables": {}, "fence": []})
    export = json.dumps({"names": names, "storages": ["AAAAAA=="]})
    raw = body + "\n" + export
    # the code binds y (the judge takes only names the sources bind), then writes its own result and export
    code = f"y = 0\nimport os\nraw = {raw!r}.encode()\nos.pwrite(3, raw, 0)\nos.ftruncate(3, len(raw))\nos._exit(0)"
    obs = judged(sb, code).observation
    assert obs.check == "error" and "could not" in obs.check_message, obs.check_message


def test_views_strides_versions_and_modules_reach_the_judge_as_they_were(sb):
    setup = "import torch, torch.nn as nn\nbase = torch.arange(6.).reshape(2, 3)\nnet = nn.Linear(2, 1)\n"
    code = ("t = base.t()\nbase.add_(1)\nwith torch.no_grad():\n    net.weight.fill_(3.0)\nnet.eval()\n"
            "import numpy as np\narr = np.arange(4)\nerr = ValueError('boom')\n")
    check = ("assert t.stride() == (1, 3) and not t.is_contiguous()\n"
             "assert t.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()\n"
             "assert base._version == 1 and t[0, 1].item() == 4.0\n"
             "assert net.weight.tolist() == [[3.0, 3.0]] and not net.training\n"
             "assert arr.tolist() == [0, 1, 2, 3] and isinstance(err, ValueError) and str(err) == 'boom'\n")
    obs = judged(sb, code, check=check, setup=setup).observation
    assert obs.check == "passed", obs.check_message


def test_a_probe_computes_what_the_check_needs_in_the_learners_process(sb):
    # (a check may also call ``double`` itself: ``test_sandbox_proxied.py``)
    code = "def double(v):\n    return v * 2\n"
    obs = judged(sb, code, check="assert torch.equal(doubled, x * 2)\n", probe="doubled = double(x)\n").observation
    assert obs.check == "passed", obs.check_message


def test_the_checks_constants_stay_the_judges_own(sb):
    setup = "import torch\nCASES = [1.0, 2.0, 3.0]\nT = torch.tensor(2.0, requires_grad=True)\n"
    probe = "answers = [c * 2 for c in CASES]\n"
    check = ("assert len(answers) == len(CASES) == 3, f'{len(answers)} answers for {len(CASES)} cases'\n"
             "assert T.grad is not None and T.grad.item() == 3.0\n")
    honest = judged(sb, "(T * 3).backward()\n", check=check, setup=setup, probe=probe).observation
    assert honest.check == "passed", honest.check_message
    shrunk = judged(sb, "CASES.clear()\nCASES = []\n(T * 3).backward()\n", check=check, setup=setup,
                    probe=probe).observation
    assert shrunk.check == "failed" and "0 answers for 3 cases" in shrunk.check_message


def tampering(edit: str) -> str:
    """Learner code that replaces the exporter: ``edit`` rewrites ``names`` (the export's name -> value) on its way out."""
    return ("def __forge():\n"
            "    import json, sys\n"
            "    exchange = sys.modules['tutor.sandbox.inner.exchange']\n"
            "    real = exchange.export\n"
            "    def forged(namespace, setup_ids, torch):\n"
            "        doc = json.loads(real(namespace, setup_ids, torch))\n"
            "        names = doc['names']\n"
            f"        {edit}\n"
            "        return json.dumps(doc).encode()\n"
            "    exchange.export = forged\n"
            "__forge()\n")


def test_a_forged_export_binds_only_what_the_sources_declare(sb):
    """Names the export adds (a built-in's, a dunder, one nobody binds) never reach the check."""
    extras = ("names.update(bonus={'k': 'int', 'v': '1'}, len={'k': 'int', 'v': '0'}, "
              "__builtins__={'k': 'dict', 'v': []}, AssertionError={'k': 'none'})")
    check = ("assert 'bonus' not in globals() and len([1]) == 1, 'an undeclared name was bound'\n" + CHECK)
    obs = judged(sb, tampering(extras) + "y = x * 2\n", check=check).observation
    assert obs.check == "passed", obs.check_message
    # bound by the learner's own code, a built-in's name is not taken either
    obs = judged(sb, "y = x * 2\nlen = 0\nsorted = None\n", check=check + "assert sorted([2, 1]) == [1, 2]\n").observation
    assert obs.check == "passed", obs.check_message


def test_setup_values_the_export_leaves_out_or_claims_untouched_cannot_be_judged(sb):
    """The judge's fresh copy of a setup value never stands in for the learner's (it would pass for it)."""
    setup = SETUP + "w = torch.zeros(3)\n"
    check = "assert w.sum().item() == 0, 'w changed'\n"
    assert judged(sb, "w.add_(1)\n", check=check, setup=setup).observation.check == "failed"
    for edit in ("names.pop('w')", "names['w'] = {'k': 'from_setup'}"):
        obs = judged(sb, tampering(edit) + "w.add_(1)\n", check=check, setup=setup).observation
        assert obs.check == "error" and "'w', which setup made, did not come back" in obs.check_message, (
            edit, obs.check, obs.check_message)


def test_a_forged_export_cannot_change_the_checks_constants(sb):
    """Emptying a test table in the export (the forging shown on 15/reordered-optimizer-load)."""
    setup = SETUP + "CASES = [1.0, 2.0]\n"
    check = "for c in CASES:\n    assert c * 2 in answers, f'{c} missing'\n"
    probe = "answers = [c + c for c in CASES]\n"
    honest = judged(sb, "", check=check, setup=setup, probe=probe).observation
    assert honest.check == "passed", honest.check_message
    buggy_probe = "answers = [c + 1 for c in CASES]\n"
    assert judged(sb, "", check=check, setup=setup, probe=buggy_probe).observation.check == "failed"
    obs = judged(sb, tampering("names['CASES'] = {'k': 'list', 'v': []}"), check=check, setup=setup,
                 probe=buggy_probe).observation
    assert obs.check == "failed", obs.check_message


def test_a_constant_crosses_when_the_drills_own_code_rebinds_it(sb):
    setup = SETUP + "LIMIT = 3\n"
    check = "assert LIMIT == 5, f'LIMIT is {LIMIT}'\n"
    request = RunRequest(code="LIMIT = 5\n", setup=setup, check=check, judged=True)
    assert run_sync(request, sb).observation.check == "failed"  # only the learner's code rebinds it
    obs = run_sync(replace(request, declares=("LIMIT",)), sb).observation  # the drill's own code does
    assert obs.check == "passed", obs.check_message


def test_a_learners_function_named_like_a_checks_helper_does_not_grade_itself(sb):
    """Setup's helpers are the judge's: a learner's file that defines one of their names (by chance or to
    pass) changes nothing; a drill whose own code redefines a setup function does get the learner's."""
    setup = SETUP + "def verdict(v):\n    return bool(torch.allclose(v, x * 2))\n"
    check = "assert verdict(y), f'y = {y.tolist()}'\n"
    cheat = "def verdict(v):\n    return True\n\ny = x + 2\n"
    obs = judged(sb, cheat, check=check, setup=setup).observation
    assert obs.check == "failed" and "y = [3.0, 4.0, 5.0]" in obs.check_message, (obs.check, obs.check_message)
    assert judged(sb, "y = x * 2\n", check=check, setup=setup).observation.check == "passed"
    # the drill's own code defines `verdict` (a repair of setup's function): the learner's is the one judged
    repair = RunRequest(code="def verdict(v):\n    return v.sum().item() == 12.0\n\ny = x * 2\n", setup=setup,
                        check=check, judged=True, declares=("verdict", "y"))
    obs = run_sync(repair, sb).observation
    assert obs.check == "passed", obs.check_message
