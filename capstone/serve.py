"""Module 38: serve the exported or the int8 model, streaming text as it is generated.

Two ways to watch it:

* HTTP (standard library only): `GET /generate?prompt=...&tokens=200&temperature=0.8&top_k=40&seed=0`
  on 127.0.0.1 answers `text/plain; charset=utf-8` with `Transfer-Encoding: chunked`: the prompt,
  then one chunk per generated token, sent as soon as it is sampled (`curl -N` shows it live).
* The terminal: the same stream printed to stdout as it comes.

The exported program (`capstone export`) is a self-contained graph ids -> logits, so it is run
without a KV cache; the int8 model (`capstone quantize`) is a GPT with int8 Linears, so it uses
the cache. Byte-level BPE tokens can end in the middle of a UTF-8 character, so the bytes go
through an incremental decoder that holds back an incomplete character until it is whole.
"""

from __future__ import annotations

import codecs
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import torch

from capstone import CapstoneError
from capstone.bpe import Tokenizer
from capstone.generate import next_token, stream
from capstone.workspace import read_json

MAX_TOKENS = 2000

# (prompt ids, new tokens, temperature, top_k, seed) -> the new token ids, one at a time
TokenStream = Callable[[list[int], int, float, "int | None", int], Iterator[int]]


def gpt_stream(model) -> TokenStream:
    """A GPT (fp32 or int8): KV-cached generation."""
    def run(ids, max_new, temperature, top_k, seed):
        generator = torch.Generator().manual_seed(seed)
        for next_id, _ in stream(model, torch.tensor([ids]), max_new, temperature, top_k, generator):
            yield int(next_id)
    return run


def program_stream(logits_fn, context: int) -> TokenStream:
    """An exported program (ids -> logits): the whole cropped window every step."""
    def run(ids, max_new, temperature, top_k, seed):
        generator = torch.Generator().manual_seed(seed)
        idx = torch.tensor([ids])
        with torch.no_grad():
            for _ in range(max_new):
                logits = logits_fn(idx[:, -context:])[:, -1, :]
                next_id = next_token(logits, temperature, top_k, generator)
                idx = torch.cat([idx, next_id], dim=1)
                yield int(next_id)
    return run


def load_stream(workspace, source: str = "auto") -> tuple[TokenStream, str]:
    """The workspace's exported (`export`) or quantized (`int8`) model as a TokenStream;
    `auto` takes the int8 model if there is one, else the exported program."""
    exported = workspace.root / "export" / "model.pt2"
    int8 = workspace.root / "quantize" / "model_int8.pt"
    if source == "auto":
        source = "int8" if int8.exists() else "export"
    if source == "int8":
        workspace.require(int8, made_by="quantize")
        from capstone import quantize

        return gpt_stream(quantize.load(int8)), f"int8 model {int8}"
    if source == "export":
        workspace.require(exported, made_by="export")
        from capstone import export

        meta = read_json(exported.parent / "export.json")
        return program_stream(export.load(exported), meta["context"]), f"exported program {exported}"
    raise CapstoneError(f"unknown model source {source!r}: use export, int8 or auto")


def text_stream(tokenizer: Tokenizer, tokens: TokenStream, prompt: str, max_new: int,
                temperature: float = 0.8, top_k: int | None = 40, seed: int = 0) -> Iterator[str]:
    """The prompt, then the text of each new token as soon as it forms whole characters."""
    ids = tokenizer.encode(prompt)
    if not ids:
        raise CapstoneError("the prompt is empty")
    if not 0 <= max_new <= MAX_TOKENS:
        raise CapstoneError(f"tokens must be between 0 and {MAX_TOKENS}")
    if temperature < 0 or (top_k is not None and top_k < 1):
        raise CapstoneError("temperature must be >= 0 and top_k >= 1")
    yield prompt
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for token in tokens(ids, max_new, temperature, top_k, seed):
        piece = decoder.decode(tokenizer.decode_bytes([token]))
        if piece:
            yield piece
    tail = decoder.decode(b"", final=True)
    if tail:
        yield tail


def make_server(tokenizer: Tokenizer, tokens: TokenStream, port: int = 0,
                host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """An HTTP server (not yet serving: call serve_forever) on host:port; port 0 = a free one."""
    lock = threading.Lock()  # one generation at a time: the model is not shared between threads

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # chunked transfer encoding needs 1.1

        def log_message(self, format, *args):  # quiet: no per-request lines on stderr
            pass

        def _error(self, status: int, message: str) -> None:
            body = (json.dumps({"error": message}) + "\n").encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            url = urlparse(self.path)
            if url.path != "/generate":
                return self._error(404, "try GET /generate?prompt=...&tokens=100")
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            try:
                top_k = int(query.get("top_k", 40))
                pieces = text_stream(tokenizer, tokens, query.get("prompt", "\n"),
                                     int(query.get("tokens", 100)), float(query.get("temperature", 0.8)),
                                     top_k or None, int(query.get("seed", 0)))
                first = next(pieces)  # validates the arguments before the 200 goes out
            except (ValueError, CapstoneError) as e:
                return self._error(400, str(e))
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            with lock:
                for piece in _chain(first, pieces):
                    data = piece.encode("utf-8")
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return ThreadingHTTPServer((host, port), Handler)


def _chain(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest


def serve_workspace(workspace, source: str = "auto", port: int = 8000, terminal: bool = False,
                    prompt: str = "\n", max_new: int = 200, temperature: float = 0.8,
                    top_k: int | None = 40, seed: int = 0, log=None, out=None) -> int:
    workspace.require(workspace.tokenizer, made_by="tokenize")
    tokenizer = Tokenizer.load(workspace.tokenizer)
    tokens, what = load_stream(workspace, source)
    if terminal:
        import sys

        out = out or sys.stdout
        for piece in text_stream(tokenizer, tokens, prompt, max_new, temperature, top_k, seed):
            out.write(piece)
            out.flush()
        out.write("\n")
        return 0
    server = make_server(tokenizer, tokens, port)
    host, bound = server.server_address[:2]
    if log:
        log(f"serving {what} on http://{host}:{bound}/generate?prompt=The%20&tokens=100 "
            "(curl -N to watch it stream; Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
