"""Stage 7 (module 35): text from a model, one token at a time, with a KV cache.

The plain loop runs the whole (cropped) sequence through the model for every new token, keeps
the last position's logits, picks a token and appends it: O(T^2) work per token. But the keys
and values of a position never change once computed (attention is causal: a later token cannot
alter an earlier one), so each layer can keep them in a cache and the next step only runs the
one new token: O(T) work per token.

    prefill   run the prompt once, filling every layer's cache   (model(prompt, kv_cache=cache))
    decode    one token at a time, appending to the cache        (model(last_token, kv_cache=cache))

`stream` is the only loop. `use_cache=False` is the reference the cache must match (and the
only way to run a model that takes no cache, such as the exported program of module 38, which
maps ids (B, T) to logits (B, T, vocab)); `generate` collects what `stream` yields, and `serve`
streams it.

The cache is preallocated to the model's context, so appending is an in-place copy rather than
a `torch.cat` that re-copies everything each step. Learned absolute positions are added at the
input and so are baked into every cached key and value: once the sequence outgrows the context
the oldest token is cropped and every position shifts, which no cache can reproduce. Past the
context the cached path therefore recomputes the cropped window each step -- same outputs as the
reference, no speed-up there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import torch

from capstone.config import SamplingConfig


class LayerCache:
    """One attention layer's keys and values, (B, n_head, length, head_dim), preallocated."""

    def __init__(self, max_length: int):
        self.max_length = max_length
        self.k: torch.Tensor | None = None
        self.v: torch.Tensor | None = None
        self.length = 0

    def append(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store the new positions' k, v; return k, v of every position so far."""
        if self.k is None:
            B, H, _, D = k.shape
            self.k = k.new_empty(B, H, self.max_length, D)
            self.v = v.new_empty(B, H, self.max_length, D)
        end = self.length + k.size(2)
        if end > self.max_length:
            raise ValueError(f"KV cache full: {end} positions > {self.max_length}")
        self.k[:, :, self.length:end] = k
        self.v[:, :, self.length:end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]


class KVCache:
    """Every layer's LayerCache; pass it as `model(idx, kv_cache=cache)`."""

    def __init__(self, model):
        self.layers = [LayerCache(model.config.context) for _ in range(model.config.n_layer)]

    @property
    def length(self) -> int:
        return self.layers[0].length


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Keep the smallest set of likeliest tokens whose probability reaches p (the nucleus);
    the others become -inf. A token is kept while the mass *before* it is still below p, so
    the token that crosses p stays in."""
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(dim=-1)
    before = probs.cumsum(dim=-1) - probs
    sorted_logits = sorted_logits.masked_fill(before >= p, float("-inf"))
    return torch.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)


def next_token(logits: torch.Tensor, temperature: float, top_k: int | None = None,
               generator: torch.Generator | None = None, top_p: float = 1.0) -> torch.Tensor:
    """(B, vocab) last-position logits -> (B, 1) token ids. temperature 0 means greedy; the
    temperature is applied before top-k and top-p, so it also changes the nucleus's size."""
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    logits = logits / temperature  # < 1 sharpens the distribution, > 1 flattens it
    if top_k:
        kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, [-1]]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        logits = top_p_filter(logits, top_p)
    return torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=generator)


def _last_logits(model, idx: torch.Tensor, cache: KVCache | None) -> torch.Tensor:
    out = model(idx) if cache is None else model(idx, kv_cache=cache)
    logits = out[0] if isinstance(out, tuple) else out  # a GPT returns (logits, loss)
    return logits[:, -1, :]


@torch.no_grad()
def stream(model, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
           top_k: int | None = None, generator: torch.Generator | None = None,
           use_cache: bool = True, *, top_p: float = 1.0, stop_token: int | None = None,
           context: int | None = None) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Yield (next_id (B, 1), logits (B, vocab)) for up to max_new_tokens steps after idx (B, T).

    `model` is a GPT, or any ids -> logits module when use_cache=False (then give `context`).
    With a `stop_token` (an end-of-text id), a row that has produced it is finished: from then on
    it gets stop_token as padding, and the loop ends as soon as every row has finished."""
    if hasattr(model, "config"):  # a GPT (an exported program has no train/eval mode to set)
        model.eval()
    context = context or model.config.context
    cache = KVCache(model) if use_cache else None
    finished = torch.zeros(idx.size(0), 1, dtype=torch.bool)
    new = idx[:, -context:]  # what the next forward pass must compute
    for _ in range(max_new_tokens):
        if cache is None:
            logits = _last_logits(model, idx[:, -context:], None)
        elif cache.length + new.size(1) <= context:
            logits = _last_logits(model, new, cache)
        else:  # past the context: positions shift, so recompute the cropped window
            cache = KVCache(model)
            logits = _last_logits(model, idx[:, -context:], cache)
        next_id = next_token(logits, temperature, top_k, generator, top_p)
        if stop_token is not None:
            next_id = torch.where(finished, torch.full_like(next_id, stop_token), next_id)
            finished |= next_id == stop_token
        idx = torch.cat([idx, next_id], dim=1)
        new = next_id
        yield next_id, logits
        if stop_token is not None and bool(finished.all()):
            return


def generate(model, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
             top_k: int | None = None, generator: torch.Generator | None = None,
             use_cache: bool = True, **options) -> torch.Tensor:
    """idx (B, T) extended by up to max_new_tokens tokens (fewer only if every row reached
    `stop_token`); options are stream's keyword-only ones."""
    steps = [t for t, _ in stream(model, idx, max_new_tokens, temperature, top_k, generator,
                                  use_cache, **options)]
    return torch.cat([idx, *steps], dim=1)


TokenStream = Callable[[list[int], SamplingConfig], Iterator[int]]


def token_stream(model, use_cache: bool = True, context: int | None = None) -> TokenStream:
    """A function (prompt ids, sampling settings) -> the new token ids one at a time: what
    `sample` prints and `serve` streams. Each call seeds its own generator, so the text depends
    only on the prompt and the settings, not on what ran before."""
    def run(ids: list[int], settings: SamplingConfig) -> Iterator[int]:
        generator = torch.Generator().manual_seed(settings.seed)
        for next_id, _ in stream(model, torch.tensor([ids]), settings.tokens, settings.temperature,
                                 settings.top_k, generator, use_cache, top_p=settings.top_p,
                                 context=context):
            yield int(next_id)
    return run
