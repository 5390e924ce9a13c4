import math

import pytest
import torch

from capstone import CapstoneError
from capstone.config import EvalConfig
from capstone.evaluate import bigram_baseline, evaluate, unigram_baseline
from capstone.model import GPTConfig
from capstone.train import TrainConfig, load_checkpoint, lr_multiplier, train

# A model small enough to train in seconds on two cores.
TINY = dict(vocab_size=512, context=64, d_model=64, n_layer=2, n_head=2)


def tiny_run(steps: int, **overrides) -> TrainConfig:
    settings = dict(batch_size=8, warmup_steps=4, log_every=1000, eval_every=0, checkpoint_every=0)
    return TrainConfig(steps=steps, **(settings | overrides))


def assert_same_tensors(a, b, where=""):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and torch.equal(a, b), f"tensors differ at {where}"
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            assert_same_tensors(a[key], b[key], f"{where}/{key}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_tensors(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def test_lr_schedule_warms_up_then_follows_a_cosine_to_min_lr():
    config = TrainConfig(steps=1000, lr=1e-3, min_lr=1e-4, warmup_steps=100)
    f = lr_multiplier(config)
    assert f(0) == pytest.approx(0.01) and f(99) == pytest.approx(1.0)
    assert f(550) == pytest.approx(0.55)  # halfway down the cosine: (1 + 0.1) / 2
    assert f(1000) == pytest.approx(0.1) and f(5000) == pytest.approx(0.1)
    assert all(f(s) >= f(s + 1) for s in range(100, 1000))


def test_stopping_and_resuming_gives_bit_identical_weights(tokenized_workspace, tmp_path, one_thread):
    import shutil

    from capstone.workspace import Workspace

    def copy(name):
        ws = Workspace(tmp_path / name)
        shutil.copytree(tokenized_workspace.root, ws.root)
        return ws

    straight, resumed = copy("straight"), copy("resumed")
    # Dropout on, so the global torch RNG matters too, not only the batch sampler's.
    config = tiny_run(steps=20)
    model_config = GPTConfig(**TINY, dropout=0.1)

    train(straight, model_config, config, log=None)
    half = train(resumed, model_config, config, stop_after=10, log=None)
    assert half["step"] == 10 and not half["finished"]
    torch.manual_seed(12345)  # disturb the global RNG: resume must restore it
    done = train(resumed, resume=True, log=None)
    assert done["step"] == 20 and done["finished"]

    a, b = load_checkpoint(straight.checkpoint), load_checkpoint(resumed.checkpoint)
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), name
    assert_same_tensors(a["optimizer"], b["optimizer"], "optimizer")
    assert_same_tensors(a["rng"], b["rng"], "rng")
    assert_same_tensors(a["sampler"], b["sampler"], "sampler")


def test_a_zero_time_budget_stops_before_the_first_step(fresh_workspace, one_thread):
    summary = train(fresh_workspace, GPTConfig(**TINY), tiny_run(steps=5), time_budget=0, log=None)
    assert summary["step"] == 0 and not summary["finished"]
    assert train(fresh_workspace, resume=True, log=None)["step"] == 5
    with pytest.raises(CapstoneError, match="--resume continues"):
        train(fresh_workspace, GPTConfig(**TINY), resume=True, log=None)


@pytest.mark.slow  # trains for ~15 s: out of the fast lane
def test_short_run_beats_the_bigram_baseline(fresh_workspace, one_thread):
    # About 4 epochs of a 2-layer, 64-wide model; measured margin: about 0.25 nats below the bigram.
    train(fresh_workspace, GPTConfig(**TINY),
          tiny_run(steps=400, batch_size=32, warmup_steps=20, lr=5e-3, min_lr=5e-4), log=None)
    report = evaluate(fresh_workspace, EvalConfig(stride=32))
    assert report["val_tokens_scored"] == report["data"]["val"]["tokens"] - 1
    assert report["model"]["nats_per_token"] < report["bigram"]["nats_per_token"] < report["unigram"]["nats_per_token"]
    bpb = report["model"]["bits_per_byte"]
    assert bpb == pytest.approx(report["model"]["nats_per_token"] * report["val_tokens_scored"]
                                / (math.log(2) * report["val_bytes_scored"]))


def test_ngram_baselines_on_a_toy_sequence():
    import numpy as np

    train_tokens = np.array([0, 1, 0, 1, 0, 1, 0, 2], dtype=np.uint16)
    val = np.array([0, 1, 0, 1], dtype=np.uint16)
    bigram, k = bigram_baseline(train_tokens, val, vocab_size=3)
    # After 0 the train text has 1 three times and 2 once; after 1 always 0.
    expect = -(2 * math.log((3 + k) / (4 + 3 * k)) + math.log((3 + k) / (3 + 3 * k))) / 3
    assert bigram == pytest.approx(expect)
    assert k <= 1e-5  # val only contains seen pairs, so less smoothing is better
    unigram, _ = unigram_baseline(train_tokens, val, vocab_size=3)
    assert unigram > bigram
