"""Benchmark: training throughput of capstone.train against a plain eager loop.

Both sides train the same 875,264-parameter GPT (capstone.model) on the same tokens with
batch 32 x 128. The reference is the shortest loop that trains it -- index random windows
out of one tensor, forward, backward, AdamW step -- while capstone.train adds the
DataLoader, decoupled weight decay groups, gradient clipping, the LR scheduler and the
bookkeeping that exact resume needs. The two are measured in alternating rounds in the same
process, so load from other users of the machine hits both about equally; the best round of
each side is the figure least disturbed by that load, the median is printed beside it.

    .venv/bin/python benchmarks/bench_train.py [--steps 20] [--rounds 5] [--threads N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from capstone import corpus, data  # noqa: E402
from capstone.model import GPT, GPTConfig  # noqa: E402
from capstone.train import TrainConfig, Trainer  # noqa: E402
from capstone.workspace import Workspace  # noqa: E402

WARMUP_STEPS = 5


def reference_tokens_per_second(tokens: torch.Tensor, config: GPTConfig, batch: int, steps: int) -> float:
    torch.manual_seed(0)
    model = GPT(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    T = config.context

    def step():
        starts = torch.randint(len(tokens) - T - 1, (batch,))
        window = torch.stack([tokens[s:s + T + 1] for s in starts.tolist()])
        _, loss = model(window[:, :-1], window[:, 1:])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    for _ in range(WARMUP_STEPS):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return steps * batch * T / (time.perf_counter() - start)


def capstone_tokens_per_second(tokens, config: GPTConfig, batch: int, steps: int) -> float:
    trainer = Trainer(config, TrainConfig(steps=WARMUP_STEPS + steps, batch_size=batch, eval_every=0,
                                          checkpoint_every=0), tokens)
    trainer.run(WARMUP_STEPS)
    start = time.perf_counter()
    trainer.run(WARMUP_STEPS + steps)
    return steps * batch * config.context / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="timed steps per round and side")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(tmp)
        corpus.build(ws)
        meta = data.build(ws, 512)
        train_tokens, _, _ = data.load_split_tokens(ws)
        config = GPTConfig(vocab_size=meta["vocab_size"])
        as_tensor = torch.from_numpy(train_tokens.astype("int64"))
        print(f"GPT {GPT(config).num_parameters():,} params, batch {args.batch_size}x{config.context}, "
              f"{torch.get_num_threads()} threads, {args.steps} timed steps x {args.rounds} rounds")
        ours, ref = [], []
        for r in range(args.rounds):
            ref.append(reference_tokens_per_second(as_tensor, config, args.batch_size, args.steps))
            ours.append(capstone_tokens_per_second(train_tokens, config, args.batch_size, args.steps))
            print(f"  round {r + 1}: reference {ref[-1] / 1000:5.1f}k tok/s   "
                  f"capstone.train {ours[-1] / 1000:5.1f}k tok/s")
    for label, pick in (("best", max), ("median", statistics.median)):
        o, r = pick(ours), pick(ref)
        print(f"{label:>6}: reference eager loop {r / 1000:5.1f}k tok/s, capstone.train {o / 1000:5.1f}k tok/s "
              f"({o / r:.2f}x the reference)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
