"""Views of real tensors, made in the real sandbox and read back over the wire.

Each case is a structure the views exist to show: expand's zero stride (one cell, many
elements), a transpose's swapped strides, a slice's offset, a saved tensor modified in
place, a parameter the optimizer does not own.
"""

from __future__ import annotations

import pytest

from tutor.sandbox.client import run_sync
from tutor.sandbox.wire import RunRequest, ViewSpec

pytestmark = pytest.mark.slow


def views(shared_sandbox, code: str, *specs: ViewSpec) -> list[dict]:
    result = run_sync(RunRequest(code=code, setup="import torch", views=specs), shared_sandbox)
    assert result.ok, result.message
    assert result.observation.error is None, result.observation.error
    return result.observation.views


def member(view: dict, name: str) -> dict:
    return next(m for m in view["members"] if m["name"] == name)


def test_storage_views_show_zero_strides_swapped_strides_and_offsets(shared_sandbox):
    code = ("x = torch.arange(6.).reshape(2, 3)\nt = x.t()\ns = x[1:, ::2]\n"
            "e = torch.tensor([1., 2., 3.]).expand(4, 3)\nother = torch.zeros(2)\n")
    storage_x, storage_e = views(shared_sandbox, code, ViewSpec("storage", "x"), ViewSpec("storage", "e"))

    assert storage_x["cells"] == 6 and storage_x["values"] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert [m["name"] for m in storage_x["members"]] == ["x", "t", "s"]  # `other` and `e` own other storages
    assert member(storage_x, "t")["stride"] == [1, 3]
    assert member(storage_x, "t")["marks"] == [[c, 1] for c in range(6)]
    s = member(storage_x, "s")
    assert (s["offset"], s["stride"], s["marks"]) == (3, [3, 2], [[3, 1], [5, 1]])
    assert storage_x["selected"] == {"name": "x", "index": [1, 1], "offset": 0, "stride": [3, 1], "cell": 4}

    e = member(storage_e, "e")
    assert storage_e["cells"] == 3 and e["stride"] == [0, 1]
    assert e["marks"] == [[0, 4], [1, 4], [2, 4]]  # 12 elements on 3 cells: four on each


def test_a_large_storage_is_drawn_as_a_window_of_it(shared_sandbox):
    (view,) = views(shared_sandbox, "big = torch.arange(1000.)\npart = big[500:510:3]\n", ViewSpec("storage", "part"))
    assert (view["cells"], view["start"], view["shown"]) == (1000, 500, 64)
    assert view["values"][0] == 500.0
    assert member(view, "part")["marks"] == [[500, 1], [503, 1], [506, 1], [509, 1]]
    assert member(view, "big")["outside"] == 1000 - 64


def test_the_graph_view_sees_a_saved_tensor_modified_in_place(shared_sandbox):
    code = ("w = torch.randn(3, requires_grad=True)\nunused = torch.randn(2, requires_grad=True)\n"
            "y = w.sigmoid()\nloss = y.sum()\ny.mul_(2)\n")
    (view,) = views(shared_sandbox, code, ViewSpec("graph", "loss"))
    names = [n["name"] for n in view["nodes"]]
    assert names == ["SumBackward0", "SigmoidBackward0", "AccumulateGrad"]
    (saved,) = view["nodes"][1]["saved"]
    assert saved["name"] == "y" and saved["state"] == "modified"
    assert (saved["saved_version"], saved["version"]) == (0, 1)
    assert view["nodes"][2]["leaf"]["name"] == "w"
    assert view["unreached"] == ["unused"]


def test_the_graph_view_says_where_a_path_stops(shared_sandbox):
    code = ("w = torch.randn(3, requires_grad=True)\nh = w * 2\nd = h.detach()\nn = w.long()\n"
            "with torch.no_grad():\n    q = w * 2\n")
    d, n, q = views(shared_sandbox, code, ViewSpec("graph", "d"), ViewSpec("graph", "n"), ViewSpec("graph", "q"))
    assert d["root"]["grad_fn"] is None and "detach" in d["root"]["why"] and "`h`" in d["root"]["why"]
    assert "int64" in n["root"]["why"]
    assert "no_grad" in q["root"]["why"]


def test_the_module_view_marks_a_parameter_no_group_holds(shared_sandbox):
    code = ("model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))\n"
            "model.register_buffer('scratch', torch.zeros(1), persistent=False)\n"
            "stray = torch.nn.Parameter(torch.zeros(2))\n"
            "opt = torch.optim.SGD([model[0].weight, stray], lr=0.1)\n"
            "model.extra = [torch.nn.Linear(1, 1)]\n")
    (view,) = views(shared_sandbox, code, ViewSpec("module", "model", "opt"))
    groups = {p["name"]: p["groups"] for p in view["parameters"]}
    assert groups == {"0.weight": [0], "0.bias": [], "1.weight": [], "1.bias": []}
    (group,) = view["groups"]
    assert [(p["name"], p["registered"]) for p in group["params"]] == [("0.weight", True), ("stray", False)]
    assert "scratch" not in view["state_dict"] and "1.running_mean" in view["state_dict"]
    assert {b["name"]: b["persistent"] for b in view["buffers"]}["scratch"] is False
    assert view["unregistered"] == [{"name": "extra", "holds": "a list holding 1 module"}]


def test_a_view_of_nothing_or_of_the_wrong_kind_says_so(shared_sandbox):
    missing, wrong = views(shared_sandbox, "x = torch.zeros(2)\n", ViewSpec("storage", "nope"), ViewSpec("module", "x"))
    assert "not bound" in missing["error"]
    assert "not a torch.nn.Module" in wrong["error"]


def test_a_custom_functions_saved_input_written_in_place_is_marked(shared_sandbox):
    code = ("class Square(torch.autograd.Function):\n"
            "    @staticmethod\n    def forward(ctx, a):\n        ctx.save_for_backward(a)\n        return a * a\n"
            "    @staticmethod\n    def backward(ctx, grad):\n        (a,) = ctx.saved_tensors\n        return 2 * a * grad\n"
            "w = torch.ones(2, requires_grad=True)\nh = w * 3\nout = Square.apply(h).sum()\nh.clamp_(min=0)\n")
    (view,) = views(shared_sandbox, code, ViewSpec("graph", "out"))
    square = next(n for n in view["nodes"] if n["name"] == "SquareBackward")
    (saved,) = square["saved"]
    assert (saved["field"], saved["name"], saved["state"]) == ("tensors", "h", "modified")
    assert (saved["saved_version"], saved["version"]) == (0, 1)
