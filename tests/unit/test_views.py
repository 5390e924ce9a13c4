"""Views of what PyTorch recorded: their text from recorded data, their wire schema, their lesson fields, check.

``tests/fixtures/views_recorded.json`` holds views made from real tensors by
``tutor/sandbox/inner/views.py`` (the slow ``tests/sandbox/test_sandbox_views.py`` makes
the same structures in the real sandbox and checks the data itself).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tutor.commands.drill_proof import view_problems
from tutor.course.loader import load_module_file
from tutor.course.schema import View
from tutor.grading import request_for
from tutor.sandbox.wire import BadResult, Observation, ViewSpec, read_observation
from tutor.tutoring.presentation import plain_lines, run_blocks
from tutor.tutoring.view_blocks import WIDTH, storage_drawing, view_blocks

RECORDED = json.loads((Path(__file__).parents[1] / "fixtures" / "views_recorded.json").read_text())


def checked(name: str) -> dict:
    """A recorded view as the UI side gets it: through the observation reader."""
    raw = Observation(views=[RECORDED[name]]).to_json()
    return read_observation(raw).views[0]


def text(name: str) -> str:
    return "\n".join(plain_lines(view_blocks(checked(name))))


# ---------------------------------------------------------------- text of each view


def test_an_expanded_tensor_shows_many_elements_on_each_cell():
    shown = text("expand")
    assert "stride (0, 1)" in shown and "12 elements on 3 cells" in shown
    drawing = storage_drawing(checked("expand"))
    assert drawing[0].split() == ["cell", "0", "1", "2"]
    assert drawing[2].split() == ["e", "×4", "×4", "×4"]
    assert "e[1, 1] is at cell offset + i·stride₀ + j·stride₁ = 0 + 1·0 + 1·1 = 1 (value 2.)" in shown


def test_a_transpose_and_a_slice_are_drawn_over_the_storage_they_share():
    shown = text("transpose")
    assert "also reached by x, s" in shown
    assert "t float32: shape (3, 2), stride (1, 3), offset 0, not contiguous" in shown
    assert "s float32: shape (1, 2), stride (3, 2), offset 3" in shown and "cells 3, 5" in shown
    rows = {row.split()[0]: row for row in storage_drawing(checked("transpose"))}
    assert rows["s"].split() == ["s", "●", "●"]  # only cells 3 and 5
    assert rows["value"].split()[1:] == ["0.", "1.", "2.", "3.", "4.", "5."]
    assert "t[1, 1] is at cell offset + i·stride₀ + j·stride₁ = 0 + 1·1 + 1·3 = 4" in shown


def test_a_large_storage_says_which_window_is_drawn_and_stays_within_80_columns():
    shown = text("window")
    assert "1,000 cells" in shown and "cells 500–563 are drawn" in shown
    assert "936 elements fall on cells not drawn" in shown
    drawing = storage_drawing(checked("window"))
    assert len(drawing) > 5 and max(len(row) for row in drawing) <= WIDTH
    assert drawing[0].split()[:3] == ["cell", "500", "501"]


def test_the_graph_view_names_nodes_leaves_and_a_saved_tensor_modified_in_place():
    shown = text("graph")
    assert "[0] SumBackward0 ← [1]" in shown and "[1] SigmoidBackward0 ← [2]" in shown
    assert "[2] AccumulateGrad: leaf w (3,)" in shown
    assert "saved result: y (3,) float32 — saved at version 0, now version 1: modified in place" in shown
    assert "Not reached from loss: unused" in shown


def test_the_graph_view_says_why_a_path_stops():
    assert "made by .detach()" in text("detached") and "`y`" in text("detached")
    assert "its dtype is int64" in text("int_cast")


def test_the_module_view_marks_unowned_and_unregistered_parameters():
    shown = text("module")
    assert "0.bias (3,) float32, requires grad, in no optimizer group" in shown
    assert "0.weight (3, 2) float32, requires grad, in optimizer group 0" in shown
    assert "Registered parameters no group holds: 0.bias, 1.weight, 1.bias" in shown
    assert "group 0: stray" in shown
    assert "scratch (1,) float32, persistent=False: not in state_dict" in shown
    assert "state_dict keys (7)" in shown
    assert "Not registered: gates is a dict holding 1 nn.Parameter: not in parameters() or state_dict()" in shown


def test_a_view_that_could_not_be_made_says_why():
    assert text("missing") == "View of storage of nope: `nope` is not bound after the code ran"


def test_views_come_after_the_drill_blocks_of_a_run_report():
    from tutor.progress.store import AttemptKind
    from tutor.tutoring.reports import RunReport
    from tutor.tutoring.states import Outcome, RunStatus

    report = RunReport("03", "d", AttemptKind.PREDICTION, Outcome.VERIFIED, status=RunStatus.OK,
                       views=(checked("expand"),), output="hello\n")
    lines = plain_lines(run_blocks(report))
    at = next(i for i, t in enumerate(lines) if t.startswith("Storage under e"))
    assert at < lines.index("Output:")


# ---------------------------------------------------------------- the wire


@pytest.mark.parametrize("forged", [
    {"kind": "storage", "of": "x", "cells": "6"},
    {"kind": "storage", "of": "x", "members": [{"name": "x", "marks": [[0]]}]},
    {"kind": "graph", "of": "x", "nodes": [{"id": 0, "secret": 1}]},
    {"kind": "module", "of": "m", "error": "x", "tree": []},
    {"kind": "plot", "of": "x"},
])
def test_a_forged_view_is_refused(forged):
    with pytest.raises(BadResult):
        read_observation(json.dumps({"protocol": 2, "views": [forged]}).encode())


def test_view_text_is_made_inert():
    raw = json.dumps({"protocol": 2, "views": [{"kind": "storage", "of": "x", "error": "bad \x1b[2J name"}]})
    from tutor.safe_text import inert

    assert "\x1b" not in read_observation(raw.encode(), inert).views[0]["error"]


def test_a_request_carries_its_views_over_the_wire():
    from tutor.sandbox.wire import RunRequest

    request = RunRequest(code="x = 1", views=(ViewSpec("module", "model", "opt"),))
    assert RunRequest.from_json(request.to_json()).views == (ViewSpec("module", "model", "opt"),)
    forged = json.loads(request.to_json())
    forged["views"] = [{"kind": "module", "of": "__import__('os')"}]
    with pytest.raises(TypeError):
        RunRequest.from_json(json.dumps(forged))


# ---------------------------------------------------------------- lesson fields

DRILL = """\
  - id: p1
    prompt: What are the strides?
    setup: import torch
    code: |
      x = torch.zeros(2, 3)
      y = x.t()
    ask:
      - {expr: y.stride(), kind: stride, view: storage}
      - {expr: "torch.equal(x, y.t())", kind: bool, view: graph}
    explanation: transposing swaps the strides.
    hints: [swap]
    wrong_answers:
      - {expr: y.stride(), answer: "(2, 1)", misconception: a transpose copies}
"""


def load(tmp_path: Path, drills: str, version: int = 2):
    path = tmp_path / "m.yaml"
    path.write_text(f'format_version: {version}\nmodule: "01"\ndrills:\n{drills}')
    return load_module_file(path)


def test_an_ask_views_its_first_name_and_a_drill_lists_more(tmp_path):
    module, errors = load(tmp_path, DRILL + "    views:\n      - {view: storage, of: x}\n"
                                            "      - {view: module, of: model, optimizer: opt}\n")
    assert errors == []
    drill = module.drills[0]
    assert [a.view for a in drill.asks] == [View("storage", "y"), View("graph", "x")]  # `torch` is not the object
    assert drill.views == (View("storage", "x"), View("module", "model", "opt"))
    assert request_for(drill).views == (ViewSpec("storage", "y"), ViewSpec("graph", "x"), ViewSpec("storage", "x"),
                                        ViewSpec("module", "model", "opt"))


@pytest.mark.parametrize("extra, field, line, words", [
    ("    views:\n      - {view: plot, of: x}\n", "drills[0].views[0].view", 18, "unknown view 'plot'"),
    ("    views:\n      - {view: storage, of: x, optimizer: opt}\n", "drills[0].views[0].optimizer", 18,
     "only goes with `view: module`"),
    ("    views:\n      - {view: graph, of: 'x + 1'}\n", "drills[0].views[0].of", 18, "is not a name"),
    ("    views:\n      - {view: graph}\n", "drills[0].views[0].of", 18, "required key is missing"),
    ("    views: []\n", "drills[0].views", 17, "at least one view"),
])
def test_a_malformed_view_is_refused_at_its_line(tmp_path, extra, field, line, words):
    _module, errors = load(tmp_path, DRILL + extra)
    by_field = {e.field: e for e in errors}
    assert field in by_field, errors
    assert words in by_field[field].message and by_field[field].line == line


def test_an_ask_of_without_a_view_and_an_unknown_ask_view_are_refused(tmp_path):
    broken = DRILL.replace("view: storage}", "of: x}").replace("view: graph}", "view: heap}")
    _module, errors = load(tmp_path, broken)
    messages = {e.field: e.message for e in errors}
    assert "goes with `view:`" in messages["drills[0].ask[0].of"]
    assert "unknown view 'heap'" in messages["drills[0].ask[1].view"]
    assert sorted(e.line for e in errors) == [11, 12]


def test_views_need_format_2(tmp_path):
    _module, errors = load(tmp_path, DRILL + "    views:\n      - {view: storage, of: x}\n", version=1)
    assert [(e.field, e.line) for e in errors] == [("drills[0].views", 17)]
    assert "format_version: 2" in errors[0].message
    _module, errors = load(tmp_path, DRILL, version=1)
    assert [(e.field, e.line) for e in errors] == [("drills[0].ask[0].view", 11), ("drills[0].ask[1].view", 12)]
    assert all("format_version: 2" in e.message for e in errors)


# ---------------------------------------------------------------- check


def test_check_fails_a_drill_whose_view_names_nothing_or_the_wrong_kind(tmp_path):
    module, _ = load(tmp_path, DRILL)
    drill = module.drills[0]
    obs = Observation(views=[checked("expand"), {"kind": "graph", "of": "x", "error": "`x` is a int, not a tensor"}])
    assert view_problems(drill, obs) == ["view graph of 'x': `x` is a int, not a tensor"]
    assert "declared" in view_problems(drill, Observation())[0]


# ---------------------------------------------------------------- legible at 80 columns; what the learner types


def test_the_storage_drawing_is_not_wrapped_in_the_result_panel_at_80_columns():
    import io

    from rich.console import Console

    from tutor.app.widgets.result_panel import rich_blocks

    for name in ("transpose", "expand", "window"):
        console = Console(width=76, file=io.StringIO(), record=True, color_system=None)  # 80 minus border, padding
        console.print(rich_blocks(view_blocks(checked(name))))
        printed = console.export_text().splitlines()
        for row in storage_drawing(checked(name)):
            if row:
                assert row in printed, (name, row)


def test_long_cell_values_keep_the_drawing_within_its_width():
    view = checked("transpose")
    view["values"] = [123456.789, -0.000123, 1e30, True, 7, "(1+2j)"]
    for row in storage_drawing(view):
        assert len(row) <= WIDTH


@pytest.mark.parametrize("typed, read", [
    ("graph loss", ("graph", "loss", "")),
    ("  Storage   y ", ("storage", "y", "")),
    ("module model opt", ("module", "model", "opt")),
    ("module model.encoder", ("module", "model.encoder", "")),
])
def test_a_view_request_is_read(typed, read):
    from tutor.tutoring.view_blocks import read_view_request

    assert read_view_request(typed) == read


@pytest.mark.parametrize("typed, words", [
    ("loss", "Type a view and a name"),
    ("graph", "Which name?"),
    ("graph x+1", "is not a name"),
    ("storage a b", "Type a view and a name"),
    ("", "Type a view and a name"),
])
def test_a_view_request_that_cannot_be_read_says_how_to_type_it(typed, words):
    from tutor.tutoring.view_blocks import read_view_request

    problem = read_view_request(typed)
    assert isinstance(problem, str) and words in problem


def test_the_view_prompt_lists_what_the_code_binds_not_its_imports():
    from tutor.tutoring.view_blocks import viewable_names

    setup = "import torch\nimport torch.nn.functional as F\n_seed = 0\n"
    code = "x = torch.ones(3, requires_grad=True)\ny, z = x * 2, x.sum()\nfor i in range(2):\n    pass\n"
    assert viewable_names(setup, code) == ("i", "x", "y", "z")
    assert viewable_names("def broken(:\n") == ()
