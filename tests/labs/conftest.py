"""A real sandbox shared by the lab tests (a warm zygote makes each run cheap)."""

from __future__ import annotations

import asyncio

import pytest

from tutor.sandbox.client import Sandbox


@pytest.fixture(scope="module")
def sandbox():
    sb = Sandbox()
    yield sb
    asyncio.run(sb.close())
