"""Checks written before the judge existed call the learner's code directly; they run unchanged.

``check: assert band(x) == ...`` used to fail with "NameError: 'band' lives only in the learner's
process" once checks moved to a separate judge process. The learner's process now stays after
its export and serves the judge's calls (``tutor/sandbox/inner/remote.py``); the check and its
verdict stay in the judge. Every case runs through the real sandbox, in each tier (``sb``), whose
fixture also proves the zygote healthy and nothing left running afterwards.
"""

from __future__ import annotations

import pytest

from tutor.sandbox.client import run_sync
from tutor.sandbox.wire import RunRequest

pytestmark = pytest.mark.slow

SETUP = "import torch\nx = torch.tensor([1.0, 2.0, 3.0])\n"
MODEL_SETUP = ("import torch\ntorch.manual_seed(0)\nmodel = torch.nn.Linear(2, 1)\n"
               "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nbatch = torch.ones(4, 2)\n")


def judged(sb, code: str, check: str, setup: str = SETUP, timeout: float = 10):
    result = run_sync(RunRequest(code=code, setup=setup, check=check, judged=True, timeout=timeout), sb)
    assert result.ok, result.message
    return result.observation


def test_a_check_calls_the_learners_function_and_judges_what_it_returns(sb):
    check = "assert torch.equal(double(x), x * 2), f'double(x) gave {double(x).tolist()}'\n"
    assert judged(sb, "def double(v):\n    return v * 2\n", check).check == "passed"
    wrong = judged(sb, "def double(v):\n    return v + 2\n", check)
    assert wrong.check == "failed" and "double(x) gave [3.0, 4.0, 5.0]" in wrong.check_message


def test_the_learners_classes_and_objects_are_used_where_they_live(sb):
    code = ("class Value:\n"
            "    def __init__(self, v):\n        self.v = v\n        self.grad = 0.0\n"
            "    def __mul__(self, other):\n        return Value(self.v * other.v)\n"
            "    def __len__(self):\n        return 1\n"
            "    def parts(self):\n        return [Value(self.v), Value(-self.v)]\n")
    check = ("a, b = Value(2.0), Value(-3.0)\nc = a * b\n"
             "assert c.v == -6.0 and a.grad == 0.0 and len(c) == 1, c.v\n"
             "assert [p.v for p in c.parts()] == [-6.0, 6.0]\n"
             "c.v = 1.5\nassert c.v == 1.5\n")
    obs = judged(sb, code, check)
    assert obs.check == "passed", obs.check_message


def test_in_place_changes_to_arguments_and_to_setups_model_reach_the_check(sb):
    fill = judged(sb, "def fill(t):\n    t.fill_(1.0)\n", "y = torch.zeros(3)\nfill(y)\nassert y.tolist() == [1.0] * 3, y\n")
    assert fill.check == "passed", fill.check_message
    step = ("def train_step(model, opt, batch):\n    opt.zero_grad()\n    loss = model(batch).pow(2).mean()\n"
            "    loss.backward()\n{step}    return loss.item()\n")
    check = ("before = model.weight.detach().clone()\nloss = train_step(model, opt, batch)\n"
             "assert isinstance(loss, float)\nassert not torch.equal(model.weight, before), 'the weights did not move'\n")
    moved = judged(sb, step.format(step="    opt.step()\n"), check, setup=MODEL_SETUP)
    assert moved.check == "passed", moved.check_message
    still = judged(sb, step.format(step=""), check, setup=MODEL_SETUP)
    assert still.check == "failed" and "did not move" in still.check_message


def test_the_learners_exception_is_raised_in_the_check_as_its_own_class(sb):
    code = "def root(v):\n    if v < 0:\n        raise ValueError('negative input')\n    return v ** 0.5\n"
    check = ("try:\n    root(-1.0)\nexcept ValueError as exc:\n    assert 'negative' in str(exc)\n"
             "else:\n    raise AssertionError('root(-1) should raise')\nassert root(4.0) == 2.0\n")
    obs = judged(sb, code, check)
    assert obs.check == "passed", obs.check_message


def test_a_learners_function_that_never_returns_fails_the_check_by_name_within_its_limit(sb):
    obs = judged(sb, "def spin(v):\n    while True:\n        pass\n", "spin(x)\n", timeout=2)
    assert obs.check == "error" and "spin() did not return" in obs.check_message


def test_a_learners_process_that_ends_or_writes_garbage_is_an_error_not_a_verdict(sb):
    ended = judged(sb, "import os\ndef quit_now(v):\n    os._exit(3)\n", "quit_now(x)\n")
    assert ended.check == "error" and "ended while quit_now() ran" in ended.check_message
    # the learner's process owns its end of the channel: a forged frame in place of a reply
    forged = judged(sb, "import os\nos.write(8, (1 << 62).to_bytes(8, 'little'))\ndef double(v):\n    return v * 2\n",
                    "assert torch.equal(double(x), x * 2)\n")
    assert forged.check == "error", forged.check_message
    garbage = judged(sb, "import os\nos.write(8, (5).to_bytes(8, 'little') + b'nope!')\ndef double(v):\n    return v * 2\n",
                     "assert torch.equal(double(x), x * 2)\n")
    assert garbage.check == "error", garbage.check_message


def test_what_the_code_imported_stays_the_learners_and_is_never_called_from_the_check(sb):
    # a patched torch.allclose, or F, in the learner's process must never decide the check: names the
    # learner's code imported are not proxied (only what it defined, and the objects it built)
    code = ("import torch\nimport torch.nn.functional as F\ntorch.allclose = lambda *a, **k: True\n"
            "def double(v):\n    return v + 100\n")
    obs = judged(sb, code, "assert torch.allclose(double(x), x * 2), 'not doubled'\n", setup="x = [1.0]\n")
    assert obs.check == "error" and "'torch'" in obs.check_message  # the check must import its own torch
    obs = judged(sb, code, "import torch\nassert torch.allclose(double(torch.ones(2)), torch.ones(2) * 2), 'not doubled'\n",
                 setup="")
    assert obs.check == "failed" and "not doubled" in obs.check_message
    obs = judged(sb, code, "import torch\nF.relu(double(torch.ones(2)))\n", setup="")
    assert obs.check == "error" and "'F'" in obs.check_message


def test_the_check_cannot_hand_the_learners_code_a_function_of_its_own(sb):
    obs = judged(sb, "def apply(f, v):\n    return f(v)\n", "assert apply(lambda v: v, 1) == 1\n")
    assert obs.check == "error" and "cannot be sent to the learner's code" in obs.check_message
