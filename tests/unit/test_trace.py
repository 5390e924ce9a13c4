"""The trace's rewriter and recorder (``tutor/sandbox/inner/trace.py``), run in this process by the runner's body.

The runner's ``run_request`` is what a confined child runs; here it runs unconfined, so these
tests see exactly the rows the sandbox would send (their JSON read back through the wire's
reader), without a zygote. Through the real sandbox: ``tests/sandbox/test_sandbox_trace.py``.
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from tutor.sandbox.inner.runner import run_request  # noqa: E402
from tutor.sandbox.inner.trace import RECORDER, instrument, recorder_name  # noqa: E402
from tutor.sandbox.wire import MAX_OBSERVATION, RunRequest, TraceSpec, read_observation  # noqa: E402
from tutor.sandbox.wire.trace import MAX_TRACE_ROWS  # noqa: E402


def traced(code: str, setup: str = "import torch", **spec):
    obs, _ = run_request(RunRequest(code=code, setup=setup, trace=TraceSpec(**spec)), torch)
    raw = obs.to_json()
    assert len(raw) <= MAX_OBSERVATION
    return read_observation(raw)


def rows_of(obs) -> list[tuple[int, str, tuple[str, ...]]]:
    return [(r.line, r.scope, tuple(s.name for s in r.names)) for r in obs.trace.rows]


def state(obs, line: int, name: str):
    return next(s for r in obs.trace.rows if r.line == line for s in r.names if s.name == name)


def test_a_row_per_statement_that_binds_or_changes_a_tensor():
    obs = traced("x = torch.ones(2, 3)\nn = 3\ny = x.t()\nx.add_(1)\nz = x\n")
    assert obs.error is None
    assert rows_of(obs) == [(1, "", ("x",)), (3, "", ("y",)), (4, "", ("x", "y")), (5, "", ("z",))]
    y = state(obs, 3, "y")
    assert (y.shape, y.stride, y.offset, y.shares, y.version) == ((3, 2), (1, 3), 0, ("x",), 0)
    assert state(obs, 4, "x").version == 1 and state(obs, 4, "x").min == 2.0
    assert state(obs, 5, "z").shares == ("x", "y")


def test_what_setup_bound_appears_only_when_the_code_changes_it():
    obs = traced("a = w * 2\nw.mul_(3)\n", setup="import torch\nw = torch.ones(2)\nv = torch.zeros(2)")
    assert rows_of(obs) == [(1, "", ("a",)), (2, "", ("w",))]


def test_line_numbers_are_kept_and_a_statement_that_raises_ends_the_rows_with_its_exception():
    code = "x = torch.ones(2, 3)\ny = x.sum(0)\nz = x @ x\nw = x + 1\n"
    obs = traced(code)
    assert obs.error is not None and obs.error.type == "RuntimeError" and obs.error.line == 3
    assert rows_of(obs) == [(1, "", ("x",)), (2, "", ("y",))]


def test_control_flow_runs_unchanged_and_only_the_named_function_is_traced_inside():
    code = (
        "def step(a):\n"                # 1
        "    b = a * 2\n"               # 2
        "    if b.sum() > 0:\n"         # 3
        "        return b\n"            # 4
        "    return -b\n"               # 5
        "def other(a):\n"               # 6
        "    hidden = a + 1\n"          # 7
        "    return hidden\n"           # 8
        "x = torch.ones(2)\n"           # 9
        "for i in range(2):\n"          # 10
        "    x = step(x)\n"             # 11
        "with torch.no_grad():\n"       # 12
        "    y = other(x)\n"            # 13
        "del y\n"                       # 14
        "total = 0\n"                   # 15
        "while total < 3:\n"            # 16
        "    total += 1\n"              # 17
    )
    obs = traced(code, function="step")
    assert obs.error is None
    assert obs.variables["total"]["value"] == 3 and obs.variables["x"]["values"] == [4.0, 4.0]
    # the record after line 3 never runs (its branch returns); `other` is not traced inside; a top-level
    # loop's body is recorded on each pass (and the loop's own row has nothing left to show), and so is
    # the body of a `with` (its row is line 13's, not the whole block's)
    assert rows_of(obs) == [(9, "", ("x",)), (2, "step", ("a", "b")), (11, "", ("x",)), (2, "step", ("a", "b")),
                            (11, "", ("x",)), (13, "", ("y",)), (14, "", ())]
    assert [r.iteration for r in obs.trace.rows] == [(), (), (1,), (), (2,), (), ()]
    assert obs.trace.rows[-1].gone == ("y",)


def test_inside_an_if_a_with_and_a_try_each_statement_is_a_row_and_their_loops_count_passes():
    code = ("w = torch.ones(2, requires_grad=True)\n"   # 1
            "loss = (w * 3).sum()\n"                    # 2
            "loss.backward()\n"                         # 3
            "with torch.no_grad():\n"                   # 4
            "    for p in [w]:\n"                       # 5
            "        p -= 0.5 * p.grad\n"               # 6
            "    w.grad.zero_()\n"                      # 7
            "if w.sum() < 0:\n"                         # 8
            "    v = w * 2\n"                           # 9
            "else:\n"                                   # 10
            "    v = w + 1\n"                           # 11
            "try:\n"                                    # 12
            "    u = v / 0\n"                           # 13
            "    raise KeyError('k')\n"                 # 14
            "except KeyError:\n"                        # 15
            "    u = v.detach()\n"                      # 16
            "finally:\n"                                # 17
            "    t = u.sum()\n")                        # 18
    obs = traced(code)
    assert obs.error is None and obs.variables["t"]["values"] == -2.0  # w is -0.5 after the update: line 9
    assert [(r.line, r.iteration, tuple(s.name for s in r.names)) for r in obs.trace.rows] == [
        (1, (), ("w",)), (2, (), ("loss",)), (3, (), ("w",)),  # the gradient arrives
        (6, (1,), ("w", "p")),                                 # the update's pass (p: the loop's name for w)
        (9, (), ("v",)), (13, (), ("u",)), (16, (), ("u",)), (18, (), ("t",))]
    assert state(obs, 6, "w").version == 1 and state(obs, 6, "w").max == -0.5


def test_the_record_call_never_collides_with_the_learners_names():
    code = f"{RECORDER} = torch.ones(1)\n{RECORDER}1 = {RECORDER} * 2\nout = {RECORDER}1 + 1\n"
    name = recorder_name(code)
    assert name not in code
    obs = traced(code)
    assert obs.error is None
    assert [n for _, _, names in rows_of(obs) for n in names] == [RECORDER, f"{RECORDER}1", "out"]
    assert name not in obs.variables and obs.variables["out"]["values"] == [3.0]


def test_future_imports_and_docstrings_still_compile():
    source = '"""doc"""\nfrom __future__ import annotations\ndef f(x: int) -> int:\n    """d"""\n    return x\n'
    instrument(source, "<snippet>", "f", "__rec")  # no SyntaxError: nothing is inserted before them


def test_the_recorder_leaves_the_random_number_generator_and_autograd_alone():
    code = "x = torch.randn(3, requires_grad=True)\ny = (x * 2).sum()\nafter = torch.rand(4)\n"
    plain, _ = run_request(RunRequest(code=code, setup="import torch"), torch)
    obs = traced(code)
    assert obs.variables["after"]["values"] == plain.variables["after"]["values"]
    y = state(obs, 2, "y")
    assert y.requires_grad and y.grad_fn == "SumBackward0" and not y.is_leaf and y.version == 0


def test_inside_a_loop_too_the_recorder_leaves_randomness_autograd_and_versions_alone():
    code = ("w = torch.zeros(3, requires_grad=True)\nopt = torch.optim.SGD([w], lr=0.1)\n"
            "for step in range(4):\n    x = torch.randn(3)\n    loss = ((w - x) ** 2).sum()\n"
            "    opt.zero_grad()\n    loss.backward()\n    opt.step()\nafter = torch.rand(2)\nv = w._version\n")
    plain, _ = run_request(RunRequest(code=code, setup="import torch"), torch)
    obs = traced(code)
    assert obs.error is None
    for name in ("w", "after", "v"):
        assert obs.variables[name]["values" if name != "v" else "value"] == \
            plain.variables[name]["values" if name != "v" else "value"], name
    loss = [s for r in obs.trace.rows if r.line == 5 for s in r.names if s.name == "loss"]
    assert len(loss) == 4 and all(s.grad_fn == "SumBackward0" for s in loss)
    assert [s.version for r in obs.trace.rows if r.line == 8 for s in r.names if s.name == "w"] == [1, 2, 3, 4]


def test_a_top_level_loop_is_recorded_on_every_pass_with_the_pass_shown():
    code = ("x = torch.zeros(2)\n"             # 1
            "for i in range(3):\n"             # 2
            "    y = x + i\n"                  # 3
            "    for j in range(2):\n"         # 4
            "        x.add_(1)\n"              # 5
            "    if i == 1:\n"                 # 6
            "        break\n"                  # 7
            "while x.sum() < 20:\n"            # 8
            "    x = x * 2\n")                 # 9
    obs = traced(code)
    assert obs.error is None and obs.variables["x"]["values"] == [16.0, 16.0]
    assert [(r.line, r.iteration, tuple(s.name for s in r.names)) for r in obs.trace.rows] == [
        (1, (), ("x",)), (3, (1,), ("y",)), (5, (1, 1), ("x",)), (5, (1, 2), ("x",)),
        (3, (2,), ("y",)), (5, (2, 1), ("x",)), (5, (2, 2), ("x",)), (9, (1,), ("x",)), (9, (2,), ("x",))]


def test_a_contract_that_breaks_in_one_pass_of_a_loop_is_found_there():
    from tutor.course.divergence_fields import Contract
    from tutor.judge.contracts import first_failure

    code = "acc = torch.ones(2)\nfor step in range(6):\n    scale = 3.0 - step\n    acc = acc / scale\n"
    obs = traced(code)
    found = first_failure(obs.trace, (Contract("acc", finite=True),))
    assert (found.line, found.iteration) == (4, (4,))  # 3 - 3 = 0: the fourth pass divides by zero
    assert found.text == "line 4 (iteration 4): acc has 2 Inf, contract finite"


@pytest.mark.parametrize("make, expect", [
    ("torch.tensor([3, -7, 12])", {"min": -7.0, "max": 12.0, "nan": 0}),
    ("torch.tensor([True, False, True])", {"min": 0.0, "max": 1.0}),
    ("torch.tensor([1.0, float('nan'), float('inf'), -2.0])", {"min": -2.0, "max": math.inf, "nan": 1, "inf": 1}),
    ("torch.tensor([1+2j, 3j])", {"min": None, "nan": 0}),
    ("torch.empty(2, 3, device='meta')", {"min": None, "nan": None, "stride": (3, 1)}),
    ("torch.sparse_coo_tensor([[0, 2]], [5.0, -1.0], (4,))", {"min": -1.0, "max": 5.0, "stride": None}),
    ("torch.zeros(0, 3)", {"min": None, "shape": (0, 3)}),
    ("torch.ones(3, dtype=torch.bfloat16) / 2", {"mean": 0.5}),
])
def test_statistics_are_safe_for_every_kind_of_tensor(make, expect):
    obs = traced(f"t = {make}\n")
    assert obs.error is None
    s = state(obs, 1, "t")
    for field, value in expect.items():
        assert getattr(s, field) == value, (field, getattr(s, field))


def test_holds_expressions_are_evaluated_after_each_row_where_their_name_is_bound():
    code = "w = torch.ones(2, requires_grad=True)\nloss = (w * 2).sum()\nloss.backward()\n"
    obs = traced(code, holds=(("w", "w.grad is not None"), ("loss", "loss.item() < 0")))
    holds = [(r.line, r.holds) for r in obs.trace.rows if r.holds]
    assert holds == [(1, (("w", "false"),)), (2, (("loss", "false"),)), (3, (("w", "true"),))]


def test_holds_is_evaluated_after_setup_and_after_every_statement_that_can_change_it():
    setup = "import torch\nw = -torch.ones(2)\nb = torch.ones(2)\n"
    code = "z = torch.zeros(1)\nb.mul_(-1)\nfor i in range(3):\n    b.add_(1)\n"
    spec = dict(holds=(("w", "bool((w >= 0).all())"), ("b", "bool((b >= 0).all())"), ("later", "later > 0")))
    obs = traced(code, setup=setup, **spec)
    holds = [(r.line, r.iteration, r.holds) for r in obs.trace.rows if r.holds]
    # w already breaks it after setup (no line of the code did); b breaks it in place on line 2 (a row where
    # no name is rebound) and keeps it again in the loop's first pass; `later` is never bound: nothing to hold
    assert holds == [(0, (), (("w", "false"),)), (2, (), (("b", "false"),)), (4, (1,), (("b", "true"),))]


def test_a_holds_expression_reading_a_name_not_bound_yet_has_nothing_to_hold_so_far():
    code = "x = torch.ones(2)\ny = torch.zeros(2)\n"
    obs = traced(code, holds=(("x", "bool((x > y).all())"),))
    assert [(r.line, r.holds) for r in obs.trace.rows if r.holds] == [(2, (("x", "true"),))]


def test_a_failing_holds_expression_is_an_observation_not_a_crash():
    obs = traced("x = torch.ones(3)\n", holds=(("x", "bool(x)"),))
    assert obs.error is None
    (row,) = obs.trace.rows
    assert row.holds[0][0] == "x" and row.holds[0][1].startswith("error: RuntimeError")


def test_watched_names_are_recorded_when_bound_to_a_number():
    obs = traced("loss = torch.tensor(2.5)\nvalue = loss.item()\n", watch=("value",))
    s = state(obs, 2, "value")
    assert (s.kind, s.type, s.value) == ("value", "float", 2.5)


def test_the_rows_are_capped_and_say_how_many_were_cut():
    code = "def step(i):\n    t = torch.ones(2) * i\n    return t\nfor i in range(1000):\n    step(i)\n"
    obs = traced(code, function="step")
    assert obs.error is None
    assert len(obs.trace.rows) == MAX_TRACE_ROWS and obs.trace.cut > 0


def test_an_exception_inside_a_loop_says_in_which_pass_of_each_enclosing_loop():
    nested = ("x = torch.ones(2)\n"                 # 1
              "for i in range(3):\n"                # 2
              "    for j in range(4):\n"            # 3
              "        d = 1 // (j - i - 1)\n"      # 4: i=0 divides by zero at j=1 (pass 1.2)
              "        x = x + d\n")                # 5
    obs = traced(nested)
    assert obs.error.type == "ZeroDivisionError" and obs.error.line == 4
    assert obs.trace.raised_in == (1, 2)
    from tutor.tutoring.trace_view import trace_lines, trace_report
    assert trace_lines(trace_report(obs.trace, error=obs.error))[-1] == (
        "  Raised at line 4 (iteration 1.2): ZeroDivisionError: integer division or modulo by zero; "
        "nothing after it ran.")
    # raised in a function the loop calls: the loop's own line (the call) is what counts
    called = ("def f(k):\n    return 1 // (3 - k)\n"
              "x = torch.zeros(1)\nfor k in range(10):\n    x = x + f(k)\n")
    assert traced(called, function="f").trace.raised_in == (4,)
    # past the statement cap the passes are still counted
    from tutor.sandbox.wire.trace import MAX_TRACE_STATEMENTS
    long = f"total = 0\nfor i in range({MAX_TRACE_STATEMENTS + 50}):\n    total += 1 // ({MAX_TRACE_STATEMENTS + 7} - i)\n"
    assert traced(long).trace.raised_in == (MAX_TRACE_STATEMENTS + 8,)
    # outside any loop, or in a loop's header (between passes): no pass is named for it
    assert traced("x = torch.ones(1)\ny = 1 // 0\n").trace.raised_in == ()
    header = "def items():\n    yield 1\n    raise ValueError('no more')\nfor v in items():\n    w = v\n"
    assert traced(header).trace.raised_in == ()


def test_a_long_loop_fills_the_cap_and_the_rest_runs_untraced_counted():
    obs = traced("x = torch.zeros(2)\nfor i in range(1000):\n    x = x + 1\n    n = 3\nx = x * 2\n")
    assert obs.error is None and obs.variables["x"]["values"] == [2000.0, 2000.0]
    assert len(obs.trace.rows) == MAX_TRACE_ROWS
    assert obs.trace.rows[-1].iteration == (MAX_TRACE_ROWS - 1,)
    # rows: line 1, then line 3 of passes 1..399; the cap cut pass 400's line 3: from there on every
    # statement that ran (lines 3 and 4 of the passes left, the loop's own record, line 5) is counted
    assert obs.trace.cut == 1 + 1 + 2 * (1000 - MAX_TRACE_ROWS) + 1 + 1


def test_a_loop_of_many_passes_that_change_no_tensor_is_traced_up_to_the_statement_cap():
    from tutor.sandbox.wire.trace import MAX_TRACE_STATEMENTS

    obs = traced(f"x = torch.ones(1)\ntotal = 0\nfor i in range({MAX_TRACE_STATEMENTS}):\n    total += i\n"
                 "y = x * total\n")
    assert obs.error is None and obs.variables["total"]["value"] == sum(range(MAX_TRACE_STATEMENTS))
    assert [r.line for r in obs.trace.rows] == [1]  # y's row came after the cap
    statements = 2 + MAX_TRACE_STATEMENTS + 2  # lines 1 and 2, line 4 on each pass, the loop's own record, line 5
    assert obs.trace.cut == statements - MAX_TRACE_STATEMENTS


def test_many_names_in_one_row_are_capped():
    names = ", ".join(f"a{i}" for i in range(30))
    obs = traced(f"{names} = torch.ones(30, 1).unbind()\n")
    (row,) = obs.trace.rows
    assert len(row.names) == 24 and row.more == 6


def test_the_size_estimate_that_caps_the_rows_is_never_below_their_json():
    import json
    from dataclasses import asdict

    from tutor.sandbox.inner.trace import _estimate

    long = "n" * 300
    code = (f"{long} = torch.ones(2, 3, 4, 5, 6, 7)\n"
            + "".join(f"v{i} = {long}[{i % 2}]\n" for i in range(30))
            + "bad = torch.tensor([float('nan'), 1.0])\nc = torch.tensor([1j])\n")
    obs, _ = run_request(RunRequest(code=code, setup="import torch",
                                    trace=TraceSpec(holds=(("bad", "bad.max() < 0"),), watch=("k",))), torch)
    assert obs.trace.rows and max(len(s.name) for r in obs.trace.rows for s in r.names) == 200
    for row in obs.trace.rows:
        assert _estimate(row) >= len(json.dumps(asdict(row))), row.line
