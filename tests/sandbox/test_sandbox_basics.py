"""The sandbox's everyday contract: observations, fence rules, timeouts, cancellation (moved from tests/unit)."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from tutor.sandbox.client import Sandbox, default_sandbox, run_sync
from tutor.sandbox.results import parse_observation
from tutor.sandbox.wire import AskSpec, BadResult, RunRequest

pytestmark = pytest.mark.slow


def run(code: str, setup: str = "import torch", asks=(), check: str = "", timeout: float = 10.0, needs=()):
    return run_sync(RunRequest(code=code, setup=setup, asks=tuple(asks), check=check, timeout=timeout,
                               needs=tuple(needs)))


def test_observes_tensors_asks_and_storage_sharing():
    result = run("y = x.t()\nz = x.clone()\nprint('hi')", setup="import torch\nx = torch.arange(6.).reshape(2, 3)",
                 asks=[AskSpec("y.stride()", "y.stride()"), AskSpec("raises", None)],
                 check="assert y.data_ptr() == x.data_ptr()")
    assert result.ok, result.message
    obs = result.observation
    assert obs.asks["y.stride()"].value == {"type": "tuple", "items": [{"type": "int", "value": 1},
                                                                       {"type": "int", "value": 3}]}
    assert obs.asks["raises"].value == {"type": "none", "no_error": True}
    assert obs.check == "passed"
    y = obs.variables["y"]
    assert y["shape"] == [3, 2] and y["stride"] == [1, 3] and y["is_contiguous"] is False
    assert y["shares_storage_with"] == ["x"] and obs.variables["z"]["shares_storage_with"] == []
    assert y["values"] == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert result.output == "hi\n"


def test_seeded_fresh_namespace_each_run():
    first = run("r = torch.rand(1).item()", asks=[AskSpec("r", "r")])
    second = run("r = torch.rand(1).item()", asks=[AskSpec("r", "r")])
    assert first.observation.asks["r"].value == second.observation.asks["r"].value
    leak = run("leftover = 1")
    assert leak.ok
    probe = run("", asks=[AskSpec("raises", "leftover", "raises")])
    assert probe.observation.asks["raises"].value["name"] == "NameError"


def test_autograd_fields_and_grad():
    result = run("w = torch.tensor([2.0], requires_grad=True)\nloss = (w * 3).sum()\nloss.backward()")
    w, loss = result.observation.variables["w"], result.observation.variables["loss"]
    assert w["is_leaf"] and w["requires_grad"] and w["grad"]["values"] == [3.0]
    assert loss["grad_fn"] == "SumBackward0" and not loss["is_leaf"]


def test_code_exception_has_type_message_and_line():
    result = run("a = 1\nb = x.view(6)", setup="import torch\nx = torch.zeros(2, 3).t()",
                 asks=[AskSpec("raises", None)])
    error = result.observation.error
    assert error.phase == "code" and error.type == "RuntimeError" and error.line == 2
    assert result.observation.asks["raises"].value["name"] == "RuntimeError"


@pytest.mark.parametrize("code,rule", [
    ("torch.set_default_dtype(torch.float64)", "default dtype"),
    ("torch.set_num_threads(1)", "thread count"),
    ("torch.set_grad_enabled(False)", "grad mode"),
    ("torch.use_deterministic_algorithms(True)", "deterministic algorithms"),
    ("torch.backends.quantized.engine = 'qnnpack'", "quantized engine"),
])
def test_each_global_state_leak_fails_the_fence(code, rule):
    result = run(code)
    assert result.ok
    assert any(rule in f for f in result.observation.fence), result.observation.fence


def test_restored_state_passes_the_fence():
    result = run("with torch.no_grad():\n    y = torch.ones(2) * 2")
    assert result.observation.fence == []


def test_network_sockets_are_refused():
    result = run("import socket\ns = socket.socket()\ns.connect(('127.0.0.1', 9))", setup="")
    assert result.observation.error.type == "PermissionError"
    assert "refused" in result.observation.error.message


def test_timeout_kills_the_whole_group():
    started = time.monotonic()
    needs = ("exec",) if default_sandbox().choose_tier() == "1" else ()
    result = run("import subprocess, time\ntry:\n    p = subprocess.Popen(['sleep', '300'])\nexcept OSError:\n"
                 "    pass  # no programs without the grant\ntime.sleep(300)", setup="", timeout=1.5, needs=needs)
    assert result.status == "timeout" and "1.5 s" in result.message
    assert time.monotonic() - started < 30


def test_cancelling_a_run_kills_the_child():
    async def go() -> int:
        sandbox = Sandbox()
        task = asyncio.create_task(sandbox.run(RunRequest(code="import time\ntime.sleep(300)", timeout=60)))
        while not sandbox.live:
            await asyncio.sleep(0.05)
        (group,) = sandbox.live
        await asyncio.sleep(1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not sandbox.live
        return group

    group = asyncio.run(go())
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)


def test_output_flood_is_capped():
    result = run("import sys\nfor _ in range(2000):\n    sys.stdout.write('A' * 1000)", setup="")
    assert result.ok
    assert len(result.output) <= 64 * 1024 and result.output_truncated > 1_000_000


def test_escape_sequences_are_inert():
    result = run("print('\\x1b[2J\\x1b]0;title\\x07hello\\x00')", setup="")
    assert result.output.startswith("hello") and "\x1b" not in result.output and "\x00" not in result.output


def test_crash_and_early_exit_are_reported():
    crash = run("import ctypes\nctypes.string_at(0)", setup="")
    assert crash.status == "crashed" and "SIGSEGV" in crash.message
    gone = run("import os\nos._exit(3)", setup="")
    assert gone.status == "no_result" and "exit code 3" in gone.message


def test_input_gets_eof_instead_of_hanging():
    result = run("input()", setup="", timeout=3)
    assert result.observation.error.type == "EOFError"


def test_system_exit_is_a_snippet_error():
    result = run("raise SystemExit(3)", setup="")
    assert result.ok and result.observation.error.type == "SystemExit"


def test_secrets_in_the_parent_environment_do_not_reach_the_child(monkeypatch):
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    result = run("import os\ntoken = os.environ.get('SECRET_TOKEN')\nenv = open('/proc/self/environ').read()",
                 setup="")
    assert result.observation.variables["token"] == {"type": "none"}
    assert "hunter2" not in result.observation.variables["env"]["value"]


def test_parent_refuses_hostile_results():
    with pytest.raises(BadResult, match="deeper"):
        parse_observation(b"[" * 200_000)
    with pytest.raises(BadResult, match="larger"):
        parse_observation(b" " * (2 << 20))
    with pytest.raises(BadResult):
        parse_observation(b'{"protocol": 2, "asks": {"x": {"value": {"type": "pickle"}}}}')
    with pytest.raises(BadResult):
        parse_observation(b"not json")


def test_a_long_failure_keeps_the_line_that_says_why():
    """torch.compile's errors put the cause last (a compiler's last words): clipping keeps the end."""
    result = run('raise RuntimeError("C++ compile error\\n" + "In file included from x.h\\n" * 400 '
                 '+ "g++: internal compiler error: File size limit exceeded")',
                 check="assert False, 'noise ' * 1000 + 'the assertion that matters'")
    obs = result.observation
    assert obs.error.message.startswith("C++ compile error") and "characters cut" in obs.error.message
    assert obs.error.message.endswith("g++: internal compiler error: File size limit exceeded")
    assert obs.check == "failed" and obs.check_message.endswith("the assertion that matters")


def test_a_run_may_ask_for_fewer_intra_op_threads_never_more():
    """`threads:` on a drill: a small op on a busy machine runs faster on one thread; the sandbox's own count caps it."""
    code = "n = torch.get_num_threads()"
    counts = {}
    for threads in (0, 1, 64):
        result = run_sync(RunRequest(code=code, setup="import torch", threads=threads))
        assert result.ok and result.observation.error is None, result.message
        counts[threads] = result.observation.variables["n"]["value"]
    assert counts[1] == 1 and counts[64] == counts[0] >= 1, counts


def test_the_code_s_own_source_is_readable_as_a_script_s_and_setup_s_is_not():
    # inspect.getsource, draft_export's report and Dynamo's "from user code" lines read source through
    # linecache; the code's own lines are there, setup's (the course's, in a lab its fixtures) are not
    code = ("import inspect, linecache\n"
            "def double(x):\n"
            "    return x * 2\n"
            "first = inspect.getsource(double).splitlines()[0]\n"
            "try:\n"
            "    inspect.getsource(helper)\n"
            "    hidden = False\n"
            "except OSError:\n"
            "    hidden = True\n"
            "setup_lines = linecache.getlines('<setup>')\n")
    result = run(code, setup="import torch\ndef helper():\n    return 'the course'\n",
                 asks=[AskSpec("first", "first"), AskSpec("hidden", "hidden"), AskSpec("setup", "setup_lines")])
    assert result.ok, result.message
    asks = result.observation.asks
    assert asks["first"].value == {"type": "str", "value": "def double(x):"}
    assert asks["hidden"].value == {"type": "bool", "value": True}
    assert asks["setup"].value == {"type": "list", "items": []}
