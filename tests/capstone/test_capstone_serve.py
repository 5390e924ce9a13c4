"""A real HTTP round trip on 127.0.0.1: the server streams chunked text as it generates."""

import http.client
import io
import threading
from dataclasses import asdict

import pytest
import torch

from capstone import export, quantize
from capstone.bpe import Tokenizer
from capstone.model import GPT, GPTConfig
from capstone.config import SamplingConfig
from capstone.generate import token_stream
from capstone.sample import text_stream
from capstone.safe_files import save_tensors
from capstone.serve import make_server, serve_workspace
from capstone.train import CHECKPOINT_FORMAT
from capstone.workspace import write_json

TINY = dict(vocab_size=512, context=32, d_model=32, n_layer=2, n_head=2)


@pytest.fixture
def served(tokenized_workspace):
    torch.manual_seed(0)
    tokenizer = Tokenizer.load(tokenized_workspace.tokenizer)
    tokens = token_stream(quantize.quantize(GPT(GPTConfig(**TINY))))
    server = make_server(tokenizer, tokens, port=0)  # a free port on 127.0.0.1
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, tokenizer, tokens
    server.shutdown()
    server.server_close()
    thread.join(10)


def get(server, path):
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=60)
    conn.request("GET", path)
    return conn, conn.getresponse()


def test_http_endpoint_streams_generated_text_in_chunks(served):
    server, tokenizer, tokens = served
    assert server.server_address[0] == "127.0.0.1"
    conn, response = get(server, "/generate?prompt=def%20&tokens=24&temperature=0&seed=1")
    assert response.status == 200
    assert response.getheader("Transfer-Encoding") == "chunked"
    assert response.getheader("Content-Type").startswith("text/plain")
    first = response.read1()  # the first chunk arrives on its own, before the rest is generated
    rest = response.read()
    conn.close()
    text = (first + rest).decode("utf-8")
    assert text.startswith("def ")
    # Exactly the text the same model and settings give without HTTP.
    expected = "".join(text_stream(tokenizer, tokens, "def ", SamplingConfig(tokens=24, temperature=0.0, seed=1)))
    assert text == expected and len(text) > len("def ")


def test_bad_requests_get_a_400_or_404(served):
    server, _, _ = served
    for path, status in (("/generate?tokens=abc", 400), ("/generate?tokens=999999", 400), ("/nope", 404)):
        conn, response = get(server, path)
        assert response.status == status, path
        assert b"error" in response.read()
        conn.close()


def test_terminal_mode_serves_the_exported_program(fresh_workspace):
    ws = fresh_workspace
    torch.manual_seed(0)
    model = GPT(GPTConfig(**TINY)).eval()
    save_tensors({"format": CHECKPOINT_FORMAT, "step": 7, "model_config": asdict(model.config),
                  "model": model.state_dict()}, ws.checkpoint)
    export.save(export.export(model), ws.exported_program)
    write_json(ws.export_report, {"context": 32, "vocab_size": 512, "checkpoint_step": 7})
    out = io.StringIO()
    greedy = SamplingConfig(tokens=10, temperature=0.0)
    assert serve_workspace(ws, source="export", terminal=True, prompt="The ", settings=greedy, out=out) == 0
    tokenizer = Tokenizer.load(ws.tokenizer)
    # The exported program (no cache) and the eager GPT (cache) write the same greedy text.
    expected = "".join(text_stream(tokenizer, token_stream(model), "The ", greedy))
    assert out.getvalue() == expected + "\n"


def test_text_reaches_the_client_before_generation_finishes(tokenized_workspace):
    tokenizer = Tokenizer.load(tokenized_workspace.tokenizer)
    gate = threading.Event()
    ids = tokenizer.encode("hello world")

    def gated(prompt_ids, settings):
        yield from ids[:2]
        assert gate.wait(30), "the client never saw the first chunks"
        yield from ids[2:]

    server = make_server(tokenizer, gated, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        conn, response = get(server, "/generate?prompt=%3E&tokens=5")
        early = b""
        while len(early) < len(">" + tokenizer.decode(ids[:2]).rstrip()):
            early += response.read1()  # generation is blocked on the gate: this is streaming
        gate.set()
        text = (early + response.read()).decode()
        conn.close()
    finally:
        gate.set()
        server.shutdown()
        server.server_close()
        thread.join(10)
    assert text == ">hello world"
