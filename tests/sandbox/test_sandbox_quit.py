"""Quitting while the zygote is still starting leaves nothing behind and prints nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

QUIT_EARLY = """
import asyncio, gc
from tutor.sandbox.client import Sandbox

async def main():
    box = Sandbox()
    task = asyncio.create_task(box.start())
    await asyncio.sleep(0.2)          # the probe or the zygote's warm-up is still under way
    task.cancel()
    await box.close()
    try:
        await task
    except BaseException:
        pass

asyncio.run(main())
gc.collect()
print("clean exit")
"""


def test_quitting_before_the_zygote_is_ready_prints_nothing():
    done = subprocess.run([sys.executable, "-c", QUIT_EARLY], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.strip() == "clean exit", done.stdout + done.stderr
    assert "never retrieved" not in done.stderr and "Traceback" not in done.stderr, done.stderr
