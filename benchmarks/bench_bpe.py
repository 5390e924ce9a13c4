"""Benchmark: training the capstone's byte-level BPE (vocab 512) on the default corpus.

Prints, side by side: the incremental trainer (capstone.bpe.train_merges, the one the course
uses), the naive full-recount reference (capstone.bpe.train_reference), and HuggingFace
`tokenizers` when it happens to be installed (it is optional and never installed for you).
Compression is measured on the validation split, which no tokenizer was trained on.

    .venv/bin/python benchmarks/bench_bpe.py [--repeats 3] [--skip-reference]

Target from the course plan: incremental training <= 3 s for vocab 512.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capstone.bpe import Tokenizer, train_merges, train_reference  # noqa: E402
from capstone.corpus import load_default, split_point  # noqa: E402

TARGET_SECONDS = 3.0


def timed(fn, repeats: int) -> tuple[list[float], object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return times, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab-size", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-reference", action="store_true", help="skip the slow naive trainer")
    args = parser.parse_args()

    corpus = load_default()
    cut = split_point(corpus.text)
    train, val = corpus.text[:cut], corpus.text[cut:]
    print(f"corpus: {corpus.source} (Python {corpus.python_version}), train {len(train):,} B, "
          f"val {len(val):,} B; vocab {args.vocab_size}")

    times, merges = timed(lambda: train_merges(train, args.vocab_size), args.repeats)
    ours = Tokenizer(merges)
    ours_bpt = len(val) / len(ours.encode(val))
    best = min(times)
    print(f"{'incremental (capstone.bpe)':<30} train {best:6.2f} s (median {statistics.median(times):.2f}, "
          f"{args.repeats} runs)  val {ours_bpt:.3f} bytes/token  "
          f"[target <= {TARGET_SECONDS:.0f} s: {'met' if best <= TARGET_SECONDS else 'MISSED'}]")

    if not args.skip_reference:
        ref_times, ref_merges = timed(lambda: train_reference(train, args.vocab_size), 1)
        same = "same merges" if ref_merges == merges else "DIFFERENT MERGES"
        print(f"{'naive full recount (reference)':<30} train {ref_times[0]:6.2f} s  ({same}; "
              f"{ref_times[0] / best:.0f}x slower)")

    try:
        from tokenizers import ByteLevelBPETokenizer
    except ImportError:
        print(f"{'HF tokenizers':<30} skipped: the `tokenizers` package is not installed (optional)")
        return 0

    def train_hf():
        hf = ByteLevelBPETokenizer()
        hf.train_from_iterator([train.decode("utf-8")], vocab_size=args.vocab_size, min_frequency=1,
                               show_progress=False, special_tokens=[])
        return hf

    hf_times, hf = timed(train_hf, args.repeats)
    hf_bpt = len(val) / len(hf.encode(val.decode("utf-8")).ids)
    print(f"{'HF tokenizers ByteLevelBPE':<30} train {min(hf_times):6.2f} s  val {hf_bpt:.3f} bytes/token "
          f"(ours/HF compression {ours_bpt / hf_bpt:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
