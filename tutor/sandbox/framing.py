"""Length-prefixed frames between the UI process and the zygote (standard library only).

A frame is ``u32 length`` + ``u32 header length`` + a JSON header + raw blobs
whose sizes the header lists under ``"blobs"``. Blobs carry the child's result
and output bytes untouched: the zygote never parses what a snippet produced,
the UI side does, with its own caps (see ``protocol.parse_observation``).
"""

from __future__ import annotations

import json
import struct

MAX_FRAME = 16 << 20  # a judged run's result carries the learner's exported values (up to 8 MiB)
MAX_HEADER = 12 << 20  # run requests carry the snippet's code, and a judge's request those exports, in the header


class FrameError(ValueError):
    pass


def pack(header: dict, *blobs: bytes) -> bytes:
    head = json.dumps({**header, "blobs": [len(b) for b in blobs]}, separators=(",", ":")).encode()
    body = struct.pack("<I", len(head)) + head + b"".join(blobs)
    if len(body) > MAX_FRAME:
        raise FrameError(f"frame of {len(body):,} bytes is too large")
    return struct.pack("<I", len(body)) + body


class Decoder:
    """Feed bytes in, get ``(header, blobs)`` frames out; raises :class:`FrameError` on anything odd."""

    def __init__(self, max_frame: int = MAX_FRAME):
        self.buffer = bytearray()
        self.max_frame = max_frame

    def feed(self, data: bytes) -> list[tuple[dict, list[bytes]]]:
        self.buffer += data
        frames = []
        while len(self.buffer) >= 4:
            (size,) = struct.unpack_from("<I", self.buffer)
            if size > self.max_frame or size < 4:
                raise FrameError(f"bad frame size {size}")
            if len(self.buffer) < 4 + size:
                break
            body = bytes(self.buffer[4:4 + size])
            del self.buffer[:4 + size]
            frames.append(_unpack(body))
        return frames


def _unpack(body: bytes) -> tuple[dict, list[bytes]]:
    (head_len,) = struct.unpack_from("<I", body)
    if head_len > min(MAX_HEADER, len(body) - 4):
        raise FrameError("bad header size")
    try:
        header = json.loads(body[4:4 + head_len])
    except (ValueError, RecursionError) as exc:
        raise FrameError(f"bad header: {str(exc)[:80]}") from None
    if not isinstance(header, dict):
        raise FrameError("header is not an object")
    sizes = header.get("blobs", [])
    if not isinstance(sizes, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                              for s in sizes):
        raise FrameError("bad blob sizes")
    if 4 + head_len + sum(sizes) != len(body):
        raise FrameError("blob sizes do not add up")
    blobs, offset = [], 4 + head_len
    for s in sizes:
        blobs.append(body[offset:offset + s])
        offset += s
    return header, blobs
