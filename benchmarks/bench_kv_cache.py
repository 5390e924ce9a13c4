"""KV-cached generation vs recomputing the whole sequence for every new token (module 35).

The course's model shape (d_model 128, 4 layers, 4 heads, vocab 512) with a 512-position table,
so that prompt + 256 new tokens fit in the context (with the default context of 128 the cached
sampler has to recompute past position 128; see capstone/generate.py). Random weights: the
work per token does not depend on what the weights are. Greedy decoding, batch 1, best of
--repeats runs.

    .venv/bin/python benchmarks/bench_kv_cache.py [--tokens 256] [--prompt 16] [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from capstone.generate import generate  # noqa: E402
from capstone.model import GPT, GPTConfig  # noqa: E402


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--prompt", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1,
                        help="1 by default: batch-1 decoding is latency-bound, and extra threads only add sync cost")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = GPT(GPTConfig(context=max(128, args.prompt + args.tokens))).eval()
    prompt = torch.randint(512, (1, args.prompt))
    out = {}
    for use_cache in (True, False):
        run = lambda: out.__setitem__(use_cache, generate(model, prompt, args.tokens, 0.0, use_cache=use_cache))  # noqa: E731
        run()  # warm-up
        out[(use_cache, "s")] = best_of(args.repeats, run)
    assert torch.equal(out[True], out[False]), "cached and uncached greedy outputs differ"
    cached, uncached = out[(True, "s")], out[(False, "s")]
    print(f"{args.tokens} new tokens after a {args.prompt}-token prompt, {model.num_parameters():,} parameters "
          f"(context {model.config.context}), {torch.get_num_threads()} threads, best of {args.repeats}:")
    print(f"  recompute every step  {uncached:7.3f} s  {args.tokens / uncached:8.1f} tok/s")
    print(f"  KV cache              {cached:7.3f} s  {args.tokens / cached:8.1f} tok/s")
    print(f"  speed-up              {uncached / cached:7.2f}x  (same greedy tokens)")


if __name__ == "__main__":
    main()
