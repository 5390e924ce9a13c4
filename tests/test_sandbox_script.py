"""The scripted sandbox of the flow tests says only what the real sandbox says."""

from __future__ import annotations

import asyncio

import pytest

from tests.scripted_sandbox import ScriptedSandbox, load_script, request_from, request_key, result_data
from tutor.sandbox.wire import RunRequest


@pytest.mark.slow
def test_every_scripted_result_is_what_the_real_sandbox_gives(shared_sandbox):
    script = load_script()
    assert script, "the flow tests' sandbox script is empty"
    stale = []
    for key, entry in script.items():
        request = request_from(entry["request"])
        assert request_key(request) == key
        real = result_data(asyncio.run(shared_sandbox.run(request)))
        if real != entry["result"]:
            stale.append(f"{key} (code {request.code[:50]!r}): recorded {entry['result']}, real {real}")
    assert not stale, ("re-record with PYTORCH_TUTOR_RECORD_SANDBOX=1 over tests/ui and tests/unit/test_plain.py:\n"
                       + "\n".join(stale))


def test_a_request_outside_the_script_is_refused_and_remembered():
    box = ScriptedSandbox(script={})
    result = asyncio.run(box.run(RunRequest(code="x = 1")))
    assert result.status == "failed_to_start" and "not in the test's sandbox script" in result.message
    assert [r.code for r in box.unscripted] == ["x = 1"]


def test_a_scripted_result_is_rebuilt_whole():
    for key, entry in load_script().items():
        result = asyncio.run(ScriptedSandbox().run(request_from(entry["request"])))
        assert result_data(result) == entry["result"], key
