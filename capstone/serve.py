"""Module 38: serve the exported or the int8 model, streaming text as it is generated.

Two ways to watch it:

* HTTP (standard library only): `GET /generate?prompt=...&tokens=200&temperature=0.8&top_k=40&seed=0`
  on 127.0.0.1 answers `text/plain; charset=utf-8` with `Transfer-Encoding: chunked`: the prompt,
  then one chunk per generated token, sent as soon as it is sampled (`curl -N` shows it live).
* The terminal: the same stream printed to stdout as it comes.

The exported program (`capstone export`) is a self-contained graph ids -> logits, so it is run
without a KV cache; the int8 model (`capstone quantize`) is a GPT with int8 Linears, so it uses
the cache. Both go through `generate.stream` and `sample.text_stream`, as `capstone sample` does.
Each request seeds its own generator, so its text depends only on its own settings.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from capstone import CapstoneError
from capstone.bpe import Tokenizer
from capstone.cli import SOURCES
from capstone.generate import SamplingConfig, TokenStream, token_stream
from capstone.sample import text_stream
from capstone.workspace import Workspace, read_json

MAX_TOKENS = 2000


def load_stream(workspace: Workspace, source: str = "auto") -> tuple[TokenStream, str]:
    """The workspace's exported (`export`) or quantized (`int8`) model as a TokenStream;
    `auto` takes the int8 model if there is one, else the exported program."""
    if source == "auto":
        source = "int8" if workspace.int8_model.exists() else "export"
    if source == "int8":
        from capstone import quantize

        return token_stream(quantize.load_workspace(workspace)), f"int8 model {workspace.int8_model}"
    if source == "export":
        from capstone import export

        program, context = export.load_workspace(workspace)
        # The program maps ids -> logits and takes no cache: the whole cropped window every step.
        return token_stream(program, use_cache=False, context=context), \
            f"exported program {workspace.exported_program}"
    raise CapstoneError(f"unknown model source {source!r}: use {', '.join(SOURCES)}")


def settings_from_query(query: dict[str, str]) -> SamplingConfig:
    """A request's sampling settings: SamplingConfig's fields, by name, with its defaults
    (`tokens` defaults to 100 here: a request should answer quickly). ValueError if malformed."""
    values = {"tokens": 100}
    for f in fields(SamplingConfig):
        if f.name in query:
            values[f.name] = type(f.default)(query[f.name])
    settings = SamplingConfig(**values)
    if not 0 <= settings.tokens <= MAX_TOKENS:
        raise ValueError(f"tokens must be between 0 and {MAX_TOKENS}")
    return settings


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
                pieces = text_stream(tokenizer, tokens, query.get("prompt", "\n"), settings_from_query(query))
                first = next(pieces)
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


def serve_workspace(workspace: Workspace, source: str = "auto", port: int = 8000, terminal: bool = False,
                    prompt: str = "\n", settings: SamplingConfig | None = None, log=None, out=None) -> int:
    """Serve over HTTP until Ctrl-C, or (terminal=True) print one generation to `out`."""
    workspace.require(workspace.tokenizer, made_by="tokenize")
    tokenizer = Tokenizer.load(workspace.tokenizer)
    tokens, what = load_stream(workspace, source)
    if terminal:
        import sys

        out = out or sys.stdout
        for piece in text_stream(tokenizer, tokens, prompt, settings):
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
