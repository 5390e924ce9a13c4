"""Stage 4 (module 32): the GPT, line by line.

A decoder-only transformer in the GPT-2 layout (pre-LayerNorm, learned positions, GELU MLP,
biases everywhere, the output head tied to the token embedding), small enough to train on
two CPU cores. With the default config it has exactly 875,264 parameters:

    token embedding   512 x 128                          65,536
    position table    128 x 128                          16,384
    4 blocks x (ln_1 256 + qkv 49,536 + attn proj 16,512
                + ln_2 256 + fc 66,048 + mlp proj 65,664)   793,088
    final LayerNorm                                          256
    head              tied to the token embedding              0

Later modules build on the names used here: the KV cache (module 35) reads `attn.qkv`, and
LoRA (module 36) wraps `attn.qkv`, `attn.proj` and `mlp.fc`.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from capstone.config import GPTConfig  # noqa: F401  (part of this stage's interface)

# Targets equal to this are not scored. The same value as `data.IGNORE_INDEX`, which marks
# the targets an earlier evaluation window already scored: a contract between the two stages,
# pinned by a test, so the model needs nothing but torch.
IGNORE_INDEX = -1


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        assert config.d_model % config.n_head == 0, "d_model must split evenly into heads"
        self.n_head = config.n_head
        # One Linear computes queries, keys and values for every head: one matmul, not three.
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model, bias=config.bias)
        self.proj = nn.Linear(config.d_model, config.d_model, bias=config.bias)
        self.dropout = config.dropout
        self.resid_dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor, cache=None) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        # (B, T, C) -> (B, n_head, T, head_dim): each head attends independently.
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        mask = None
        if cache is not None:  # module 35 (generate.KVCache): prepend earlier positions' keys/values
            k, v = cache.append(k, v)
            past = k.size(2) - T  # the T new queries sit after `past` cached positions
            mask = None if past == 0 else torch.ones(T, past + T, dtype=torch.bool, device=x.device).tril(past)
        # softmax(q k^T / sqrt(head_dim) + causal mask) v, fused: position t sees 0..t only.
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None,
                                           dropout_p=self.dropout if self.training else 0.0)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # heads side by side again
        return self.resid_dropout(self.proj(y))


class MLP(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.fc = nn.Linear(config.d_model, 4 * config.d_model, bias=config.bias)
        self.proj = nn.Linear(4 * config.d_model, config.d_model, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.proj(F.gelu(self.fc(x))))


class Block(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.d_model, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.d_model, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor, cache=None) -> torch.Tensor:
        # Pre-norm residual: the stream x is only ever added to, which keeps gradients
        # flowing straight from the loss to the embeddings.
        x = x + self.attn(self.ln_1(x), cache)
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.tok_emb = nn.Embedding(config.vocab_size, config.d_model)
        self.pos_emb = nn.Embedding(config.context, config.d_model)
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.d_model, bias=config.bias)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        # Weight tying: reading a token in and writing it out use the same vectors. Saves
        # vocab x d_model parameters (7 % of this model) and trains better on small data.
        self.head.weight = self.tok_emb.weight

        self.apply(self._init_weights)
        # Each block adds two residual branches to the stream; scale the last Linear of each
        # so the stream's variance does not grow with depth (GPT-2, nanoGPT).
        for block in self.blocks:
            for proj in (block.attn.proj, block.mlp.proj):
                nn.init.normal_(proj.weight, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        # N(0, 0.02), not PyTorch's defaults: the default Embedding init (std 1) through the
        # tied head starts the loss near 85 nats instead of ln(vocab) = 6.2.
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def num_parameters(self) -> int:
        # .parameters() yields a shared tensor once, so the tied head is not counted twice.
        return sum(p.numel() for p in self.parameters())

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None, kv_cache=None
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """idx (B, T) token ids -> logits (B, T, vocab) and, given targets (B, T), the mean
        cross-entropy in nats over targets that are not IGNORE_INDEX. With a kv_cache
        (generate.KVCache, module 35) idx holds only the new tokens, after kv_cache.length
        earlier ones."""
        B, T = idx.shape
        start = 0 if kv_cache is None else kv_cache.length
        if start + T > self.config.context:
            raise ValueError(f"sequence of length {start + T} exceeds the context of {self.config.context}")
        pos = torch.arange(start, start + T, device=idx.device)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))
        for i, block in enumerate(self.blocks):
            x = block(x, None if kv_cache is None else kv_cache.layers[i])
        logits = self.head(self.ln_f(x))
        loss = None
        if targets is not None:
            # reshape, not view: targets are often a shifted slice like window[:, 1:] (not contiguous).
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1),
                                   ignore_index=IGNORE_INDEX)
        return logits, loss
