"""Stage 6 (module 34): how good is the model, and compared with what?

* Nats per token: the mean negative log-likelihood (natural log) of each validation token
  given the tokens before it. It is what the training loss measures, but computed with a
  sliding window (`data.sliding_windows`): every validation token is scored exactly once,
  with 65 to 128 tokens of context after the first window. Scoring non-overlapping chunks
  instead would give the first tokens of every chunk almost no context and overstate the loss.
* Bits per byte: the same total divided by ln 2 and by the number of bytes those tokens
  decode to. Nats per token depend on the tokenizer (bigger tokens -> more nats each);
  bits per byte do not, so they compare models with different vocabularies, or with a
  character-level model.
* Baselines, counted on the training tokens and scored on the same validation targets:
  the unigram (each token's overall frequency) and the bigram (the frequency of a token after
  the previous one), both with add-k smoothing. k is tuned on validation, which flatters the
  baselines -- fine, since the point is that the model must beat their best case.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from capstone import CapstoneError
from capstone.bpe import Tokenizer
from capstone.config import EvalConfig
from capstone.data import IGNORE_INDEX, evaluation_loader, load_split_tokens
from capstone.model import GPT
from capstone.train import load_trained_model
from capstone.workspace import Workspace, write_json

SMOOTHING_GRID = np.logspace(-6, 1, 57)  # k from 1e-6 to 10, eight values a decade


@torch.no_grad()
def sliding_window_nll(model: GPT, tokens: np.ndarray, stride: int = 64,
                       batch_size: int = 32) -> tuple[float, int]:
    """(total nats, number of tokens scored) over `tokens`, every target scored once."""
    model.eval()
    total, count = 0.0, 0
    for x, y in evaluation_loader(tokens, model.config.context, stride, batch_size):
        logits, _ = model(x)
        nll = F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=IGNORE_INDEX, reduction="sum")
        total += nll.item()
        count += int((y != IGNORE_INDEX).sum())
    return total, count


def _best_smoothing(nll_for_k) -> tuple[float, float]:
    """(mean nats, k) minimising the validation loss over SMOOTHING_GRID."""
    return min((nll_for_k(k), float(k)) for k in SMOOTHING_GRID)


def unigram_baseline(train: np.ndarray, val: np.ndarray, vocab_size: int) -> tuple[float, float]:
    counts = np.bincount(train, minlength=vocab_size).astype(np.float64)
    targets = val[1:].astype(np.int64)

    def nll(k: float) -> float:
        return float(-np.mean(np.log((counts[targets] + k) / (counts.sum() + k * vocab_size))))

    return _best_smoothing(nll)


def bigram_baseline(train: np.ndarray, val: np.ndarray, vocab_size: int) -> tuple[float, float]:
    train = train.astype(np.int64)
    pair_counts = np.bincount(train[:-1] * vocab_size + train[1:], minlength=vocab_size * vocab_size)
    pair_counts = pair_counts.reshape(vocab_size, vocab_size).astype(np.float64)
    row_totals = pair_counts.sum(axis=1)
    prev, nxt = val[:-1].astype(np.int64), val[1:].astype(np.int64)
    seen, context_totals = pair_counts[prev, nxt], row_totals[prev]

    def nll(k: float) -> float:
        return float(-np.mean(np.log((seen + k) / (context_totals + k * vocab_size))))

    return _best_smoothing(nll)


def bits_per_byte(nats_per_token: float, tokens_scored: int, bytes_scored: int) -> float:
    """The same loss in bits per byte of text: the total nats (nats/token x tokens) over ln 2 and
    over the bytes those tokens decode to. A tokenizer with bigger tokens scores more nats per
    token and fewer tokens; bits per byte do not move."""
    return nats_per_token * tokens_scored / (math.log(2) * bytes_scored)


def scored_byte_count(tokenizer: Tokenizer, tokens: np.ndarray) -> int:
    """Bytes of text the scored targets decode to: every token but the first, which has no
    left context and is never scored."""
    return len(tokenizer.decode_bytes(np.asarray(tokens[1:]).tolist()))


def evaluate(workspace: Workspace, config: EvalConfig | None = None, log=None) -> dict:
    """Score the workspace's checkpoint on validation; write eval/eval.json."""
    config = config or EvalConfig()
    stride = config.stride
    train_tokens, val_tokens, data_meta = load_split_tokens(workspace)
    model, state = load_trained_model(workspace)
    if state["data_sha256"] != data_meta["train"]["sha256"]:
        raise CapstoneError("the checkpoint was trained on other tokens (tokenize ran since): "
                            "run `pytorch-tutor capstone train` again")
    tokenizer = Tokenizer.load(workspace.tokenizer)
    vocab = data_meta["vocab_size"]
    if log:
        log(f"scoring {len(val_tokens) - 1:,} validation tokens, sliding window stride {stride} ...")

    nats, scored = sliding_window_nll(model, val_tokens, stride, config.batch_size)
    assert scored == len(val_tokens) - 1, "every validation target is scored exactly once"
    scored_bytes = scored_byte_count(tokenizer, val_tokens)
    unigram, k_uni = unigram_baseline(train_tokens, val_tokens, vocab)
    bigram, k_bi = bigram_baseline(train_tokens, val_tokens, vocab)

    def in_bits_per_byte(nats_per_token: float) -> float:
        return bits_per_byte(nats_per_token, scored, scored_bytes)

    model_nats = nats / scored
    report = {
        "checkpoint_step": state["step"],
        "stride": stride,
        "context": model.config.context,
        "val_tokens_scored": scored,
        "val_bytes_scored": scored_bytes,
        "model": {"nats_per_token": model_nats, "perplexity": math.exp(model_nats),
                  "bits_per_byte": in_bits_per_byte(model_nats)},
        "unigram": {"nats_per_token": unigram, "k": k_uni, "bits_per_byte": in_bits_per_byte(unigram)},
        "bigram": {"nats_per_token": bigram, "k": k_bi, "bits_per_byte": in_bits_per_byte(bigram)},
        "gap_to_bigram": bigram - model_nats,
        "data": data_meta,
    }
    write_json(workspace.eval_report, report)
    return report
