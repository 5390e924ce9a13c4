"""Proxied calls, without a sandbox: when a judged run serves them, and what one message can and cannot do.

The real path (two confined processes and the pipe between them) is ``tests/sandbox/test_sandbox_proxied.py``;
here, the host's decision (read from the text) and the learner side's answer to a message, one at a time.
"""

from __future__ import annotations

import json

import pytest
import torch

from tutor.sandbox.bindings import calls_learner_code, learners_own
from tutor.sandbox.inner import exchange, remote
from tutor.sandbox.wire import RunRequest
from tutor.sandbox.wire import TestSpec as Spec


def request(code: str, check: str = "", tests=()) -> RunRequest:
    return RunRequest(code=code, check=check, tests=tuple(Spec(f"t{i}", c) for i, c in enumerate(tests)))


def test_what_only_the_learners_process_has():
    code = ("import torch\nfrom math import sqrt\nclass Net(torch.nn.Module):\n    pass\n"
            "def band(x):\n    return x\nnet = Net()\nlayer = torch.nn.Linear(2, 2)\ny = band(1)\n")
    assert learners_own(code) == {"Net", "band", "net"}
    assert learners_own("def broken(:\n") == frozenset()


@pytest.mark.parametrize("check, tests, serves", [
    ("assert band(x) == 1", (), True),
    ("", ("assert net(x).shape == (2,)",), True),
    ("assert y == 1, 'band() gave the wrong value'", (), False),  # the name only inside a message
    ("assert layer.weight.shape == (2, 2)", (), False),  # data and setup's objects need no proxy
    ("", (), False),
])
def test_a_run_serves_calls_only_where_the_check_reads_the_learners_own_names(check, tests, serves):
    code = "import torch\nclass Net(torch.nn.Module):\n    pass\ndef band(x):\n    return x\nnet = Net()\ny = 1\n"
    assert calls_learner_code(request(code, check, tests)) is serves


def answer(handles: remote.Handles, message: dict) -> dict:
    message.setdefault("storages", [])
    return json.loads(remote._answer(json.dumps(message).encode(), handles, torch))


def test_the_learners_side_answers_with_data_and_keeps_objects_behind_handles():
    handles = remote.Handles()
    handles.handle(lambda v, k=0: {"sum": v + k, "self": handles}, "f()")
    args = json.loads(exchange.encode_doc({"args": [2], "kwargs": [["k", 3]]}, torch, None, ("args", "kwargs")))
    reply = answer(handles, {"op": "call", "h": 0, **args})
    items = dict((k["v"], v) for k, v in reply["value"]["v"])
    assert items["sum"] == {"k": "int", "v": "5"} and items["self"]["k"] == "remote"
    assert handles.objects[items["self"]["h"]] is handles


@pytest.mark.parametrize("message", [
    {"op": "call", "h": 7, "args": {"k": "list", "v": []}, "kwargs": {"k": "list", "v": []}},  # no such handle
    {"op": "binary", "h": 0, "name": "clear", "args": {"k": "list", "v": []}, "kwargs": {"k": "list", "v": []}},
    {"op": "eval", "h": 0, "args": {"k": "list", "v": []}, "kwargs": {"k": "list", "v": []}},
])
def test_a_message_names_only_a_handle_it_was_given_and_only_an_operator(message):
    handles = remote.Handles()
    handles.handle({"a": 1}, "a dict")
    with pytest.raises(exchange.BadExport):
        answer(handles, message)
    assert handles.objects == [{"a": 1}]


def test_without_a_channel_a_learners_object_cannot_be_judged():
    doc = json.dumps({"names": {"band": {"k": "remote", "h": 0, "what": "band()"}}, "storages": []})
    namespace: dict = {}
    exchange.apply(namespace, doc, torch, binds=("band",))
    with pytest.raises(NameError, match="lives only in the learner's process"):
        namespace["band"](1)
