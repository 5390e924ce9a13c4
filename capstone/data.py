"""Stage 3 (module 31): token files on disk and the loaders that read them.

The corpus is tokenized once and written as a flat array of uint16 ids (`train.bin`,
`val.bin`): 2 bytes a token, because the vocabulary is far below 65,536, and memory-mapped
on read, so the OS pages in only what a batch touches -- the same layout scales to files
larger than RAM.

Two ways to read them:

* training: `RandomWindows` -- each example is a random window of `context + 1` tokens,
  input = the first `context`, target = the same shifted by one. A window can start
  anywhere, so every epoch sees fresh alignments. The starts come from the sampler's own
  `torch.Generator`, whose state is saved in checkpoints: that is what makes resume exact.
* evaluation: `SlidingWindows` -- fixed windows that score every validation token exactly
  once, each with as much left context as the model allows (see `sliding_windows`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, Sampler

from capstone import CapstoneError
from capstone.safe_files import reading, replacing
from capstone.workspace import Workspace, read_json

TOKEN_DTYPE = np.uint16
IGNORE_INDEX = -1  # targets that are not scored (see model.GPT.forward)


def write_tokens(path: Path, ids: list[int]) -> None:
    if ids and max(ids) > np.iinfo(TOKEN_DTYPE).max:
        raise CapstoneError(f"token id {max(ids)} does not fit in uint16; use a vocab below 65,536")
    with replacing(path) as f:  # a new file renamed into place: never written through a link
        out = np.memmap(f, dtype=TOKEN_DTYPE, mode="w+", shape=(len(ids),))
        out[:] = np.asarray(ids, dtype=TOKEN_DTYPE)
        out.flush()
        del out  # close the mapping before the file takes its name


def read_tokens(path: Path) -> np.memmap:
    with reading(path) as f:  # opened without following a link; the mapping outlives the file object
        return np.memmap(f, dtype=TOKEN_DTYPE, mode="r")


def load_split_tokens(workspace: Workspace) -> tuple[np.memmap, np.memmap, dict]:
    workspace.require(workspace.train_bin, workspace.val_bin, workspace.data_meta, made_by="tokenize")
    meta = read_json(workspace.data_meta)
    train, val = read_tokens(workspace.train_bin), read_tokens(workspace.val_bin)
    if len(train) != meta["train"]["tokens"] or len(val) != meta["val"]["tokens"]:
        raise CapstoneError(f"{workspace.train_bin.parent} does not match data.json: "
                            "run `pytorch-tutor capstone tokenize` again")
    return train, val, meta


# --------------------------------------------------------------------------- training


class RandomWindows(Dataset):
    """Index = window start; item = (input ids, target ids), both of length `context`."""

    def __init__(self, tokens: np.ndarray, context: int):
        if len(tokens) < context + 2:
            raise CapstoneError(f"{len(tokens)} training tokens are too few for context {context}; "
                                "use a larger corpus or a smaller --context")
        self.tokens, self.context = tokens, context

    def __len__(self) -> int:
        return len(self.tokens) - self.context  # every start that leaves room for the target

    def __getitem__(self, start: int) -> tuple[torch.Tensor, torch.Tensor]:
        # int64 because embedding lookups and cross_entropy want Long indices.
        window = torch.from_numpy(self.tokens[start:start + self.context + 1].astype(np.int64))
        return window[:-1], window[1:]


class RandomBatchSampler(Sampler[list[int]]):
    """An endless stream of batches of uniformly random window starts.

    It owns its generator, so the stream depends only on the seed and on how many batches
    were drawn -- not on dropout or anything else that consumes the global RNG -- and its
    `state_dict` is all a checkpoint needs to continue the exact same stream.
    """

    def __init__(self, num_starts: int, batch_size: int, seed: int):
        self.num_starts, self.batch_size = num_starts, batch_size
        self.generator = torch.Generator().manual_seed(seed)

    def __iter__(self):
        while True:
            yield torch.randint(self.num_starts, (self.batch_size,), generator=self.generator).tolist()

    def state_dict(self) -> dict:
        return {"generator": self.generator.get_state()}

    def load_state_dict(self, state: dict) -> None:
        self.generator.set_state(state["generator"])


def training_loader(tokens: np.ndarray, context: int, batch_size: int,
                    seed: int) -> tuple[DataLoader, RandomBatchSampler]:
    """A DataLoader of random windows, plus its sampler (whose state goes in checkpoints).

    num_workers=0 on purpose: with worker processes the loader prefetches batches, and the
    sampler's state would run ahead of the batches the model has actually seen.

    The loader gets a generator of its own, used for nothing: every `iter(loader)` draws a
    "base seed" for worker processes, from the global torch RNG unless told otherwise. That
    one hidden draw after a resume would shift every later dropout mask, and the resumed run
    would no longer match the straight one.
    """
    dataset = RandomWindows(tokens, context)
    sampler = RandomBatchSampler(len(dataset), batch_size, seed)
    loader = DataLoader(dataset, batch_sampler=sampler, num_workers=0,
                        generator=torch.Generator().manual_seed(seed))
    return loader, sampler


# --------------------------------------------------------------------------- evaluation


def sliding_windows(num_tokens: int, context: int, stride: int) -> list[tuple[int, int]]:
    """(start, first_scored) for each window of a sliding evaluation.

    Token 0 has no left context, so the targets are tokens 1 .. num_tokens-1. A window
    starting at `start` feeds tokens[start : start+context] and predicts
    tokens[start+1 : start+context+1]; it scores only the targets from `first_scored` on,
    the ones no earlier window scored. The first window scores all its targets (context 1
    up to `context`); each later window moves by `stride` and scores the `stride` newest
    targets, each seeing between context-stride+1 and `context` tokens. The last window is
    pulled back to end exactly at the last token, so all windows have the same length.
    """
    if not 0 < stride <= context:
        raise CapstoneError(f"stride must be between 1 and the context ({context}), got {stride}")
    last_target = num_tokens - 1
    length = min(context, last_target)  # a tiny text gives one shorter window
    windows = []
    scored_up_to = 0  # targets 1..scored_up_to are done
    start = 0
    while scored_up_to < last_target:
        start = min(start, last_target - length)
        windows.append((start, scored_up_to + 1))
        scored_up_to = start + length
        start += stride
    return windows


class SlidingWindows(Dataset):
    """Evaluation windows; targets that an earlier window already scored are IGNORE_INDEX."""

    def __init__(self, tokens: np.ndarray, context: int, stride: int):
        self.tokens = tokens
        self.length = min(context, len(tokens) - 1)
        self.windows = sliding_windows(len(tokens), context, stride)

    def __len__(self) -> int:
        return len(self.windows)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        start, first_scored = self.windows[i]
        window = torch.from_numpy(self.tokens[start:start + self.length + 1].astype(np.int64))
        x, y = window[:-1], window[1:].clone()
        # Target y[j] is token start+1+j; mask the ones scored before this window.
        y[: first_scored - (start + 1)] = IGNORE_INDEX
        return x, y


def evaluation_loader(tokens: np.ndarray, context: int, stride: int, batch_size: int = 32) -> DataLoader:
    if len(tokens) < 2:
        raise CapstoneError("the validation split has fewer than 2 tokens; use a larger corpus")
    return DataLoader(SlidingWindows(tokens, context, stride), batch_size=batch_size, shuffle=False)


# --------------------------------------------------------------------------- the workspace stage


def build(workspace: Workspace, vocab_size: int = 512, log=None) -> dict:
    """Train the tokenizer on the training split, then write train.bin / val.bin / data.json.

    The tokenizer never sees the validation text, so validation measures generalisation of
    the tokenizer as well as of the model.
    """
    import time

    from capstone.bpe import Tokenizer
    from capstone.corpus import load_split
    from capstone.workspace import sha256_file, write_json

    train_text, val_text, corpus_meta = load_split(workspace)
    if log:
        log(f"training a byte-level BPE tokenizer, vocab {vocab_size}, on {len(train_text):,} bytes ...")
    started = time.perf_counter()
    tokenizer = Tokenizer.train(train_text, vocab_size, metadata={"corpus": corpus_meta})
    bpe_seconds = time.perf_counter() - started
    tokenizer.save(workspace.tokenizer)

    meta = {"corpus": corpus_meta, "vocab_size": tokenizer.vocab_size,
            "tokenizer": {"sha256": sha256_file(workspace.tokenizer), "merges": tokenizer.vocab_size - 256,
                          "train_seconds": round(bpe_seconds, 3)}}
    for name, text, path in (("train", train_text, workspace.train_bin), ("val", val_text, workspace.val_bin)):
        ids = tokenizer.encode(text)
        write_tokens(path, ids)
        meta[name] = {"tokens": len(ids), "bytes": len(text), "bytes_per_token": len(text) / len(ids),
                      "sha256": sha256_file(path)}
    write_json(workspace.data_meta, meta)
    return meta
