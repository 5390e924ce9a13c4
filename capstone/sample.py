"""Stage 7 (module 35 starts here): text from a checkpoint.

Plain autoregressive sampling: run the whole (cropped) sequence through the model, keep
the last position's logits, pick a token, append, repeat. Each new token recomputes
attention over every earlier position -- O(T^2) work per token -- which is exactly the waste
module 35's KV cache removes. This version stays as the reference the cache must match.
"""

from __future__ import annotations

import torch

from capstone import CapstoneError
from capstone.bpe import Tokenizer
from capstone.model import GPT
from capstone.train import load_trained_model
from capstone.workspace import Workspace


@torch.no_grad()
def generate(model: GPT, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
             top_k: int | None = None, generator: torch.Generator | None = None) -> torch.Tensor:
    """Extend idx (B, T) by max_new_tokens sampled tokens. temperature 0 means greedy."""
    model.eval()
    for _ in range(max_new_tokens):
        context = idx[:, -model.config.context:]  # the position table ends at `context`
        logits, _ = model(context)
        logits = logits[:, -1, :]
        if temperature == 0:
            next_id = logits.argmax(dim=-1, keepdim=True)
        else:
            logits = logits / temperature  # < 1 sharpens the distribution, > 1 flattens it
            if top_k is not None:
                kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, [-1]]
                logits = logits.masked_fill(logits < kth, float("-inf"))
            next_id = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=generator)
        idx = torch.cat([idx, next_id], dim=1)
    return idx


def sample(workspace: Workspace, prompt: str = "\n", max_new_tokens: int = 200,
           temperature: float = 0.8, top_k: int | None = 40, seed: int = 0, use_cache: bool = True) -> str:
    """The prompt followed by its sampled continuation, decoded (with module 35's KV cache
    unless use_cache=False)."""
    workspace.require(workspace.tokenizer, made_by="tokenize")
    if temperature < 0:
        raise CapstoneError(f"--temperature must be >= 0, got {temperature}")
    if top_k is not None and top_k < 1:
        raise CapstoneError(f"--top-k must be >= 1, got {top_k}")
    tokenizer = Tokenizer.load(workspace.tokenizer)
    model, _ = load_trained_model(workspace)
    ids = tokenizer.encode(prompt)
    if not ids:
        raise CapstoneError("the prompt is empty: give at least one character, e.g. --prompt 'The '")
    generator = torch.Generator().manual_seed(seed)  # its own stream: same seed, same text
    if use_cache:
        from capstone.generate import generate as generate_cached

        out = generate_cached(model, torch.tensor([ids]), max_new_tokens, temperature, top_k, generator)
    else:
        out = generate(model, torch.tensor([ids]), max_new_tokens, temperature, top_k, generator)
    return tokenizer.decode(out[0].tolist())
