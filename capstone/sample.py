"""Stage 7 (module 35): text from a checkpoint.

Tokens become text here. Byte-level BPE tokens can end in the middle of a UTF-8 character, so
the bytes go through an incremental decoder that holds back an incomplete character until it is
whole: `text_stream` yields the prompt, then each new token's text as soon as it forms whole
characters. `sample` prints it for the workspace's checkpoint; `serve` (module 38) sends the
same stream over HTTP. The loop itself is `generate.stream`.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator

from capstone import CapstoneError
from capstone.bpe import Tokenizer
from capstone.generate import SamplingConfig, TokenStream, token_stream
from capstone.workspace import Workspace


def text_stream(tokenizer: Tokenizer, tokens: TokenStream, prompt: str,
                settings: SamplingConfig | None = None) -> Iterator[str]:
    """The prompt, then the text of each new token as soon as it forms whole characters.
    The arguments are checked before the first piece comes out."""
    settings = settings or SamplingConfig()
    ids = tokenizer.encode(prompt)
    if not ids:
        raise CapstoneError("the prompt is empty: give at least one character, e.g. --prompt 'The '")
    if problem := settings.problem():
        raise CapstoneError(problem)
    return _pieces(tokenizer, tokens, prompt, ids, settings)


def _pieces(tokenizer, tokens, prompt, ids, settings) -> Iterator[str]:
    yield prompt
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for token in tokens(ids, settings):
        piece = decoder.decode(tokenizer.decode_bytes([token]))
        if piece:
            yield piece
    tail = decoder.decode(b"", final=True)
    if tail:
        yield tail


def sample(workspace: Workspace, prompt: str = "\n", settings: SamplingConfig | None = None,
           use_cache: bool = True) -> str:
    """The prompt followed by its sampled continuation (with module 35's KV cache unless
    use_cache=False: the same text, recomputed every step)."""
    from capstone.train import load_trained_model

    workspace.require(workspace.tokenizer, made_by="tokenize")
    tokenizer = Tokenizer.load(workspace.tokenizer)
    model, _ = load_trained_model(workspace)
    return "".join(text_stream(tokenizer, token_stream(model, use_cache), prompt, settings))
