"""Module 35: generation with a KV cache.

`sample.generate` recomputes the whole sequence for every new token. But the keys and values
of a position never change once it has been computed (attention is causal: a later token
cannot alter an earlier one), so each layer can keep them in a cache and the next step only
runs the one new token through the model: O(T) work per token instead of O(T^2).

    prefill   run the prompt once, filling every layer's cache   (model(prompt, kv_cache=cache))
    decode    one token at a time, appending to the cache        (model(last_token, kv_cache=cache))

The cache is preallocated to the model's context, so appending is an in-place copy rather than
a `torch.cat` that re-copies everything each step. Learned absolute positions are added at the
input and so are baked into every cached key and value: once the sequence outgrows the context
the uncached sampler crops the oldest token and every position shifts, which no cache can
reproduce. Past the context this generator therefore recomputes the cropped window each step
(exactly what `sample.generate` does) -- same outputs, no speed-up there.

`stream` is the shared loop: it yields each new token with the logits it was drawn from, which
is what the equality test compares and what `serve` streams.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from capstone.model import GPT


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

    def __init__(self, model: GPT):
        self.layers = [LayerCache(model.config.context) for _ in range(model.config.n_layer)]

    @property
    def length(self) -> int:
        return self.layers[0].length


def next_token(logits: torch.Tensor, temperature: float, top_k: int | None,
               generator: torch.Generator | None) -> torch.Tensor:
    """(B, vocab) last-position logits -> (B, 1) token ids, exactly as `sample.generate` picks."""
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    logits = logits / temperature  # < 1 sharpens the distribution, > 1 flattens it
    if top_k is not None:
        kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, [-1]]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=generator)


@torch.no_grad()
def stream(model: GPT, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
           top_k: int | None = None, generator: torch.Generator | None = None,
           use_cache: bool = True) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Yield (next_id (B, 1), logits (B, vocab)) for each of max_new_tokens steps after idx (B, T).

    use_cache=False is the reference: the whole cropped window every step."""
    model.eval()
    context = model.config.context
    cache = KVCache(model) if use_cache else None
    new = idx[:, -context:]  # what the next forward pass must compute
    for _ in range(max_new_tokens):
        if cache is None:
            logits, _ = model(idx[:, -context:])
        elif cache.length + new.size(1) <= context:
            logits, _ = model(new, kv_cache=cache)
        else:  # past the context: positions shift, so recompute the cropped window
            cache = KVCache(model)
            logits, _ = model(idx[:, -context:], kv_cache=cache)
        logits = logits[:, -1, :]
        next_id = next_token(logits, temperature, top_k, generator)
        idx = torch.cat([idx, next_id], dim=1)
        new = next_id
        yield next_id, logits


def generate(model: GPT, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
             top_k: int | None = None, generator: torch.Generator | None = None,
             use_cache: bool = True) -> torch.Tensor:
    """idx (B, T) extended by max_new_tokens tokens; the KV-cached twin of `sample.generate`."""
    steps = [t for t, _ in stream(model, idx, max_new_tokens, temperature, top_k, generator, use_cache)]
    return torch.cat([idx, *steps], dim=1)
