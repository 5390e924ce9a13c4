"""`threads:` on a drill: read at file:line, carried to every run of the drill, refused out of range on the wire."""

from __future__ import annotations

import json

import pytest

from tutor.course.loader import load_module_file
from tutor.grading import request_for
from tutor.sandbox.wire import PROTOCOL, RunRequest

DRILL = """\
format_version: 2
module: t
drills:
  - id: jac
    threads: {threads}
    prompt: A Jacobian of a small function.
    setup: import torch
    code: y = torch.ones(3)
    ask: [{{expr: y.shape, kind: shape}}]
    explanation: ones(3) has shape (3,).
    hints: [Count the elements.]
    wrong_answers: [{{answer: "(1, 3)", misconception: a vector is a row}}]
"""


def test_a_drills_thread_count_reaches_its_run_request(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(DRILL.format(threads=1))
    module, errors = load_module_file(path)
    assert errors == []
    assert request_for(module.drills[0]).threads == 1


@pytest.mark.parametrize("threads", [0, 65, "two", "true"])
def test_a_thread_count_out_of_range_is_an_error_at_its_line(tmp_path, threads):
    path = tmp_path / "m.yaml"
    path.write_text(DRILL.format(threads=threads))
    _module, errors = load_module_file(path)
    assert any(e.field.endswith("threads") and e.line == 5 and "1 to 64" in e.message for e in errors), errors


@pytest.mark.parametrize("threads", [-1, 65, 1.5, True])
def test_the_wire_refuses_a_thread_count_out_of_range(threads):
    raw = json.dumps({"protocol": PROTOCOL, "code": "x = 1", "threads": threads})
    with pytest.raises((ValueError, TypeError)):
        RunRequest.from_json(raw)
    assert RunRequest.from_json(json.dumps({"protocol": PROTOCOL, "code": "x = 1", "threads": 2})).threads == 2
