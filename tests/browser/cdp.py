"""A small Chrome DevTools Protocol client over aiohttp (already installed with textual-serve).

Enough to drive a headless Chromium: open a page, evaluate JavaScript, type, take a
screenshot. Every wait is for an event or a condition, with a deadline that only turns a
hang into a failure.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import aiohttp

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Chromium:
    """A headless Chromium process with its DevTools endpoint."""

    def __init__(self, executable: str, width: int = 1280, height: int = 900) -> None:
        self.profile = tempfile.mkdtemp(prefix="tutor-chromium-")
        argv = [executable, "--headless=new", f"--user-data-dir={self.profile}", "--remote-debugging-port=0",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--enable-unsafe-swiftshader",  # WebGL for xterm.js without a GPU
                f"--window-size={width},{height}", "about:blank"]
        if os.geteuid() == 0:  # Chromium's own sandbox refuses to start as root
            argv.insert(1, "--no-sandbox")
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, start_new_session=True)

    def devtools_port(self, timeout: float = 30.0) -> int:
        """Chromium says where DevTools listens on stderr ('DevTools listening on ws://…')."""
        deadline = time.monotonic() + timeout
        assert self.process.stderr is not None
        lines = []
        while time.monotonic() < deadline:
            line = self.process.stderr.readline().decode("utf-8", "replace")
            if not line:
                break
            lines.append(line)
            if line.startswith("DevTools listening on ws://"):
                return int(line.split("ws://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        raise RuntimeError("Chromium did not start DevTools:\n" + "".join(lines[-20:]))

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    """One page target, driven over its DevTools websocket."""

    def __init__(self, session: aiohttp.ClientSession, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.session, self.ws = session, ws
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future] = {}
        self._events: dict[str, list[asyncio.Future]] = {}
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, devtools_port: int) -> "Page":
        session = aiohttp.ClientSession()
        async with session.get(f"http://127.0.0.1:{devtools_port}/json/list") as response:
            targets = await response.json()
        page = next(t for t in targets if t["type"] == "page")
        ws = await session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        return cls(session, ws)

    async def _read(self) -> None:
        async for message in self.ws:
            data = json.loads(message.data)
            if "id" in data:
                future = self._pending.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_result(data)
            else:
                for future in self._events.pop(data.get("method", ""), []):
                    if not future.done():
                        future.set_result(data.get("params", {}))
        for future in self._pending.values():
            if not future.done():
                future.set_exception(RuntimeError("Chromium closed the DevTools connection"))

    async def send(self, method: str, **params) -> dict:
        call_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        await self.ws.send_str(json.dumps({"id": call_id, "method": method, "params": params}))
        reply = await asyncio.wait_for(future, 60)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def event(self, method: str) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self._events.setdefault(method, []).append(future)
        return future

    async def evaluate(self, expression: str):
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:60]}…: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    async def navigate(self, url: str) -> None:
        await self.send("Page.enable")
        loaded = self.event("Page.loadEventFired")
        await self.send("Page.navigate", url=url)
        await asyncio.wait_for(loaded, 60)

    async def type_text(self, text: str) -> None:
        """One key event per character, as a keyboard sends them (xterm.js reads key events)."""
        for char in text:
            await self.send("Input.dispatchKeyEvent", type="keyDown", key=char, text=char, unmodifiedText=char)
            await self.send("Input.dispatchKeyEvent", type="keyUp", key=char)

    async def press(self, key: str, code: int, text: str = "") -> None:
        common = {"key": key, "code": key, "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}
        await self.send("Input.dispatchKeyEvent", type="keyDown", text=text, **common)
        await self.send("Input.dispatchKeyEvent", type="keyUp", **common)

    async def screenshot(self, path: Path) -> Path:
        data = (await self.send("Page.captureScreenshot", format="png"))["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()
        await self.session.close()
