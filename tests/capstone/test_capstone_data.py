from collections import Counter

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from capstone import CapstoneError
from capstone.data import (IGNORE_INDEX, SlidingWindows, load_split_tokens, read_tokens,
                           sliding_windows, training_loader, write_tokens)
from capstone.workspace import read_json


@settings(max_examples=300, deadline=None)
@given(num_tokens=st.integers(2, 2000), context=st.integers(1, 160), data=st.data())
def test_sliding_windows_score_every_token_once(num_tokens, context, data):
    stride = data.draw(st.integers(1, context))
    length = min(context, num_tokens - 1)
    scored = Counter()
    for start, first in sliding_windows(num_tokens, context, stride):
        assert 0 <= start and start + length <= num_tokens - 1  # inputs and targets exist
        assert start + 1 <= first <= start + length  # each window scores at least one target
        for target in range(first, start + length + 1):
            scored[target] += 1
            seen = target - start  # tokens of context before this target
            assert 1 <= seen <= context
            if start > 0:  # after the first window, every scored target has a long context
                assert seen >= length - stride + 1
    assert scored == Counter(range(1, num_tokens))


def test_stride_64_context_128_arithmetic():
    windows = sliding_windows(1000, 128, 64)
    # First window scores targets 1..128; then 64 more per window; the last is pulled back.
    assert windows[:3] == [(0, 1), (64, 129), (128, 193)]
    assert windows[-1] == (999 - 128, windows[-2][0] + 128 + 1)
    assert len(windows) == 1 + -(-(999 - 128) // 64)


def test_sliding_dataset_masks_already_scored_targets():
    tokens = np.arange(300, dtype=np.uint16)
    dataset = SlidingWindows(tokens, context=128, stride=64)
    positions = []
    for x, y in dataset:
        assert x.shape == y.shape == (128,)
        assert torch.equal(y[y != IGNORE_INDEX], x[y != IGNORE_INDEX] + 1)  # target = next token
        positions += y[y != IGNORE_INDEX].tolist()  # tokens are their own positions here
    assert positions == list(range(1, 300))


def test_token_files_and_metadata(tokenized_workspace):
    ws = tokenized_workspace
    train, val, meta = load_split_tokens(ws)
    assert train.dtype == np.uint16 and isinstance(train, np.memmap)
    assert meta == read_json(ws.data_meta)
    assert meta["vocab_size"] == 512 and int(train.max()) < 512
    assert meta["corpus"] == read_json(ws.corpus_meta)
    assert 1.9 < meta["train"]["bytes_per_token"] < 2.6


def test_write_read_round_trip_and_overflow(tmp_path):
    write_tokens(tmp_path / "t.bin", [0, 1, 65535])
    assert read_tokens(tmp_path / "t.bin").tolist() == [0, 1, 65535]
    with pytest.raises(CapstoneError, match="uint16"):
        write_tokens(tmp_path / "u.bin", [65536])


def test_training_loader_yields_shifted_windows_reproducibly():
    tokens = np.arange(1000, dtype=np.uint16)
    loader, sampler = training_loader(tokens, context=16, batch_size=4, seed=3)
    batches = iter(loader)
    x, y = next(batches)
    assert x.shape == y.shape == (4, 16) and x.dtype == torch.int64
    assert torch.equal(y, x + 1)
    state = sampler.state_dict()
    after = next(batches)[0]
    loader2, sampler2 = training_loader(tokens, context=16, batch_size=4, seed=99)
    sampler2.load_state_dict(state)
    assert torch.equal(next(iter(loader2))[0], after)


def test_starting_a_loader_leaves_the_global_rng_alone():
    # DataLoader draws a worker base seed on every iter(); it must not come from the global
    # RNG that dropout uses, or a resumed run would diverge from a straight one.
    loader, _ = training_loader(np.arange(100, dtype=np.uint16), context=8, batch_size=2, seed=0)
    before = torch.get_rng_state()
    iter(loader)
    assert torch.equal(before, torch.get_rng_state())
