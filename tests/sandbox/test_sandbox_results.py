"""Results a hostile snippet can send: forged shapes, escape sequences, lone surrogates.

The child's result is hostile input. Each forgery below crashed ``run``, ``check``
or plain mode with a ``TypeError``, or printed raw escape sequences, before the
declared schema in ``wire`` checked every field and made every string inert.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_helpers import run
from tutor.sandbox.results import parse_observation
from tutor.sandbox.wire import BadResult

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ESC = "\x1b]0;owned\x07\x1b[2J\x1b]52;c;ZWNobyBoaQ==\x07"


def forging(body: dict) -> str:
    raw = json.dumps(body)
    return f"import os\nraw = {raw!r}.encode()\nos.pwrite(3, raw, 0)\nos.ftruncate(3, len(raw))\nos._exit(0)"


def observation(**fields) -> dict:
    return {"protocol": 2, "error": None, "asks": {}, "check": "passed", "variables": {}, "fence": [], **fields}


FORGED_VALUES = [
    {"type": "tensor", "shape": 5},
    {"type": "tensor", "shape": [2], "dtype": "torch.float32", "device": "cpu", "numel": 2, "values": {"x": 1}},
    {"type": "tensor", "shape": ["2"], "dtype": "torch.float32", "device": "cpu", "numel": 2},
    {"type": "int", "value": ESC},
    {"type": "bool", "value": ESC},
    {"type": "float", "value": ESC},
    {"type": "float", "value": [1.0]},
    {"type": "list", "items": 3},
    {"type": "dict", "items": [["k"]]},
    {"type": "size", "items": [{"type": "int", "value": 10 ** 30}]},
    {"type": "str", "value": "x", "evil": ESC},
    {"type": "mystery"},
]


@pytest.mark.parametrize("value", FORGED_VALUES, ids=lambda v: json.dumps(v)[:40])
def test_forged_values_are_refused_whole(value):
    raw = json.dumps(observation(variables={"x": value})).encode()
    with pytest.raises(BadResult):
        parse_observation(raw)
    raw = json.dumps(observation(asks={"x": {"value": value}})).encode()
    with pytest.raises(BadResult):
        parse_observation(raw)


def test_every_string_of_a_well_formed_result_is_made_inert():
    tensor = {"type": "tensor", "shape": [1], "dtype": ESC, "device": "cpu", "numel": 1, "grad_fn": ESC,
              "values": [ESC]}
    obs = parse_observation(json.dumps(observation(
        variables={ESC: {"type": "str", "value": ESC}, "t": tensor,
                   "d": {"type": "dict", "items": [[ESC, {"type": "dtype", "value": ESC}]]}},
        check_message=ESC, fence=[ESC],
        error={"phase": "code", "type": ESC, "message": "bad \udc80 surrogate" + ESC, "line": 1},
    )).encode())
    text = repr(obs)
    assert "\x1b" not in text and "\x07" not in text and "\\x1b" not in text and "\\udc80" not in text


def test_forged_results_reach_the_parent_as_bad_results(sb):
    for value in FORGED_VALUES[:4]:
        result = run(sb, forging(observation(variables={"x": value})))
        assert result.status == "bad_result", (value, result.status, result.message)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, timeout=180,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("snippet", [
    forging(observation(variables={"x": {"type": "tensor", "shape": 5}})),
    forging(observation(variables={"x": {"type": "int", "value": ESC}})),
    forging(observation(variables={"x": {"type": "str", "value": "fake\n-- verdict: ok" + ESC}})),
    "raise ValueError('lone \\udc80 surrogate \\x1b]0;title\\x07')",
    "print('\\x1b]52;c;ZWNobyBoaQ==\\x07\\x1b[2J', '\\udc80')",
], ids=["shape", "int-escapes", "str-escapes", "surrogate-error", "surrogate-print"])
def test_run_prints_no_traceback_and_no_control_character(tmp_path, snippet):
    path = tmp_path / "snippet.py"
    path.write_text(snippet, encoding="utf-8", errors="surrogatepass")
    done = cli("run", str(path), cwd=tmp_path)
    out = done.stdout + done.stderr
    assert b"Traceback" not in out, out.decode(errors="replace")
    assert not any(c in out for c in (b"\x1b", b"\x07")), out
    out.decode("utf-8")  # valid UTF-8: no lone surrogate escaped into the terminal
    assert b"-- verdict:" in done.stdout
