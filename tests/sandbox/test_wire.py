"""The wire both sides of the sandbox share: one definition of each message, cap and grant (no sandbox runs)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from tutor.sandbox import wire
from tutor.sandbox.wire import AskSpec, Observation, RunRequest


def test_a_request_round_trips_through_its_own_json():
    request = RunRequest(code="x = 1", setup="import torch", check="assert x", probe="y = x",
                         asks=(AskSpec("a", "x"), AskSpec("b", None), AskSpec("c", "1/0", "raises")),
                         timeout=30.0, export=True, imports='{"names": {}}', needs=("exec",))
    assert RunRequest.from_json(request.to_json()) == request


def test_a_judged_request_never_crosses_as_one():
    with pytest.raises(ValueError, match="two halves"):
        RunRequest(code="x = 1", check="assert x", judged=True).to_json()


@pytest.mark.parametrize("change", [
    {"protocol": 1}, {"timeout": -1}, {"timeout": 10_000}, {"asks": [{"key": "a", "expr": "x", "mode": "eval"}]},
    {"code": 5}, {"needs": "exec"}, {"export": "yes"},
], ids=["protocol", "negative-timeout", "huge-timeout", "ask-mode", "code-type", "needs-type", "export-type"])
def test_a_malformed_request_is_refused(change):
    data = json.loads(RunRequest(code="x = 1").to_json())
    data.update(change)
    with pytest.raises((ValueError, TypeError)):
        RunRequest.from_json(json.dumps(data))


def test_a_checks_line_travels_as_a_field():
    obs = Observation(check="failed", check_message="expected 3: got 2", check_line=4)
    back = wire.read_observation(obs.to_json())
    assert (back.check, back.check_message, back.check_line) == ("failed", "expected 3: got 2", 4)
    assert back.check_text == "line 4: expected 3: got 2"
    assert replace(back, check_line=None).check_text == "expected 3: got 2"


def test_an_oversized_observation_drops_its_variables_but_keeps_its_verdict():
    big = {f"v{i}": {"type": "str", "value": "x" * 30_000} for i in range(40)}
    obs = Observation(check="failed", check_message="no", check_line=1, variables=big)
    raw = obs.to_json()
    assert len(raw) <= wire.MAX_OBSERVATION
    back = wire.read_observation(raw)
    assert back.variables == {} and back.check == "failed" and back.check_line == 1


def test_the_grantable_needs_are_declared_once():
    from tutor.course import parse  # the lesson reader checks `needs:` against the wire's list itself

    assert parse.SANDBOX_NEEDS is wire.GRANTS
    assert wire.granted(["exec"]) == {"exec", "processes"} and wire.granted([]) == frozenset()


def test_clipping_a_failure_keeps_the_line_that_says_why():
    report = ("C++ compile error\n\nCommand:\ng++ " + "-I/some/include " * 400 + "\n\nOutput:\n"
              + "In file included from ...\n" * 50 + "fatal error: error writing to /tmp/x.gch: File too large\n"
              "compilation terminated.")
    clipped = wire.clip_message(report)
    assert len(clipped) <= wire.MAX_TEXT
    assert clipped.startswith("C++ compile error")
    assert clipped.endswith("fatal error: error writing to /tmp/x.gch: File too large\ncompilation terminated.")
    assert "characters cut" in clipped
    assert wire.clip_message("short and sweet") == "short and sweet"


def test_one_reader_turns_descriptions_back_into_values():
    described = {"type": "dict", "items": [
        ["shape", {"type": "size", "items": [{"type": "int", "value": 2}, {"type": "int", "value": 3}]}],
        ["values", {"type": "tensor", "shape": [2], "dtype": "torch.float32", "device": "cpu", "numel": 2,
                    "values": [1.5, "nan"]}],
        ["error", {"type": "exception", "name": "RuntimeError", "message": "boom"}],
        ["model", {"type": "module", "class": "Linear"}],
    ]}
    checked = wire.read_value(described)
    plain = wire.plain_value(checked)
    assert plain["shape"] == (2, 3) and plain["error"] == "RuntimeError" and plain["model"] == "<Linear>"
    assert plain["values"][0] == 1.5 and plain["values"][1] != plain["values"][1]  # nan
    with pytest.raises(wire.TooLarge):
        wire.plain_value({"type": "tensor", "shape": [1000], "dtype": "torch.float32", "device": "cpu",
                          "numel": 1000})
    with pytest.raises(wire.Unreadable):
        wire.plain_value({"type": "pickle"})


def test_the_inner_side_imports_only_the_standard_library_and_the_wire():
    """Every module of the inner package, imported as the zygote imports it (isolated mode), before torch."""
    code = ("import pkgutil, importlib, sys\n"
            "import tutor.sandbox.inner as inner\n"
            "for m in pkgutil.iter_modules(inner.__path__):\n"
            "    importlib.import_module('tutor.sandbox.inner.' + m.name)\n"
            "print(' '.join(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True, cwd="/")
    loaded = done.stdout.split()
    ours = sorted(m for m in loaded if m.split(".")[0] == "tutor")
    assert "tutor.sandbox.inner.loop" in ours and "tutor.sandbox.wire" in ours
    allowed = ("tutor", "tutor.sandbox", "tutor.sandbox.framing")
    assert [m for m in ours if m not in allowed and not m.startswith(("tutor.sandbox.inner", "tutor.sandbox.wire"))] == []
    others = {m.split(".")[0] for m in loaded} - set(sys.stdlib_module_names) - {"tutor"}
    # the interpreter's own start-up (site, the editable install's finder) is not the inner side's doing
    assert {m for m in others if not m.startswith(("_", "__editable__"))} == set(), others
