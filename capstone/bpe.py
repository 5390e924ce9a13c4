"""Stage 2 (module 30): a byte-level BPE tokenizer, trained from scratch.

Byte-level means the starting alphabet is the 256 byte values, so every input -- any
language, any emoji, even invalid UTF-8 -- encodes without an "unknown" token, and decoding
the ids gives back exactly the bytes that went in. Training then learns `vocab_size - 256`
merges: "the pair (a, b) becomes the new id 256 + i".

Two decisions shape the code:

* Pre-split into chunks (words, numbers, punctuation runs, whitespace) and never merge
  across a chunk boundary, as GPT-2 does. Merges then learn " the" and "ing", not "e t".
  GPT-2's pattern needs the third-party `regex` module for `\\p{L}`; ours is an ASCII
  approximation for the stdlib `re`, with every byte >= 0x80 counted as a letter so that
  UTF-8 letters stay inside their word.
* Count pairs incrementally. The naive loop (minbpe's `get_stats`) recounts every pair in
  the whole text for every merge: O(merges x text). Real text has few distinct chunks
  (about 6,000 in the default corpus against 200,000 chunk occurrences), so we count each
  distinct chunk once with its frequency, keep `pair -> count` and `pair -> chunks that
  contain it`, and after a merge recompute only the chunks that contained the merged pair.
  A heap hands out the best pair; entries that went stale when a count changed are skipped
  when popped ("lazy deletion"), as in HuggingFace tokenizers' trainer.

Ties are broken deterministically: highest count first, then the smallest pair (a, b).
`train_reference` is the naive full-recount version with the same tie-break; the tests
check that both learn identical merges.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter, defaultdict
from pathlib import Path

from capstone import CapstoneError

FORMAT = "capstone-bpe/1"

# GPT-2's split with ASCII classes: contractions | optional space + letters (bytes >= 0x80
# count as letters) | optional space + digits | optional space + other symbols |
# whitespace not followed by a non-space (so " word" keeps its space) | remaining whitespace.
# Every byte falls in one of the classes, so the chunks always concatenate back to the input.
SPLIT_PATTERN = (
    rb"'(?:[sdmt]|ll|ve|re)"
    rb"| ?[A-Za-z\x80-\xff]+"
    rb"| ?[0-9]+"
    rb"| ?[^\sA-Za-z0-9\x80-\xff]+"
    rb"|\s+(?!\S)"
    rb"|\s+"
)


def split_chunks(data: bytes, pattern: re.Pattern[bytes]) -> list[bytes]:
    return pattern.findall(data)


def merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replace every occurrence of `pair` in `ids` with `new_id`, scanning left to right."""
    out = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def _distinct_chunks(text: bytes, pattern: re.Pattern[bytes]) -> tuple[list[list[int]], list[int]]:
    # Counter keeps first-seen order, so the chunk indices are deterministic too.
    counts = Counter(split_chunks(text, pattern))
    return [list(chunk) for chunk in counts], list(counts.values())


def count_pairs(words: list[list[int]], freqs: list[int]
                ) -> tuple[dict[tuple[int, int], int], dict[tuple[int, int], set[int]]]:
    """The full count: every adjacent pair's count over the chunks (each chunk weighted by its
    frequency), and `where`, pair -> the indices of the chunks that hold it."""
    pair_counts: dict[tuple[int, int], int] = defaultdict(int)
    where: dict[tuple[int, int], set[int]] = defaultdict(set)
    for w, (ids, freq) in enumerate(zip(words, freqs)):
        for pair in zip(ids, ids[1:]):
            pair_counts[pair] += freq
            where[pair].add(w)
    return pair_counts, where


def apply_merge(words: list[list[int]], freqs: list[int], pair: tuple[int, int], new_id: int,
                pair_counts: dict[tuple[int, int], int], where: dict[tuple[int, int], set[int]]
                ) -> list[tuple[int, int]]:
    """Merge `pair` into `new_id` in every chunk that holds it, in place, and bring
    `pair_counts` and `where` up to date by recounting only those chunks: afterwards they
    equal `count_pairs(words, freqs)` (pairs whose count fell to 0 are gone). Returns the
    pairs whose count changed and is still positive, for the caller's heap.

    The update subtracts each touched chunk's old pairs and adds its new ones, rather than
    patching the neighbours of each occurrence: in "a a a" the two (a, a) occurrences
    overlap, and only one of them is merged.
    """
    delta: dict[tuple[int, int], int] = defaultdict(int)
    for w in where.pop(pair):
        old, freq = words[w], freqs[w]
        new = merge(old, pair, new_id)
        words[w] = new
        old_pairs, new_pairs = list(zip(old, old[1:])), list(zip(new, new[1:]))
        for p in old_pairs:
            delta[p] -= freq
        for p in new_pairs:
            delta[p] += freq
        for p in set(old_pairs).difference(new_pairs):
            if p != pair:
                where[p].discard(w)
        for p in new_pairs:
            where[p].add(w)
    changed = []
    for p, d in delta.items():
        if d == 0:
            continue
        count = pair_counts[p] + d
        if count:
            pair_counts[p] = count
            changed.append(p)
        else:
            del pair_counts[p]
            where.pop(p, None)
    return changed


def train_merges(text: bytes, vocab_size: int, pattern: bytes = SPLIT_PATTERN) -> list[tuple[int, int]]:
    """Learn up to `vocab_size - 256` merges with incremental pair counts."""
    if vocab_size < 256:
        raise CapstoneError(f"vocab size must be at least 256 (the byte alphabet), got {vocab_size}")
    words, freqs = _distinct_chunks(text, re.compile(pattern))
    pair_counts, where = count_pairs(words, freqs)
    # Max-heap via negated counts; on equal counts the smaller pair pops first.
    heap = [(-count, pair) for pair, count in pair_counts.items()]
    heapq.heapify(heap)

    merges: list[tuple[int, int]] = []
    for new_id in range(256, vocab_size):
        while heap:
            neg_count, pair = heapq.heappop(heap)
            if pair_counts.get(pair, 0) == -neg_count:  # else stale: the count changed since the push
                break
        else:
            break  # every chunk is a single token: nothing left to merge
        merges.append(pair)
        for p in apply_merge(words, freqs, pair, new_id, pair_counts, where):
            heapq.heappush(heap, (-pair_counts[p], p))
        assert pair not in pair_counts, "a merged pair cannot survive its own merge"
    return merges


def train_reference(text: bytes, vocab_size: int, pattern: bytes = SPLIT_PATTERN) -> list[tuple[int, int]]:
    """The naive algorithm: recount every pair before every merge. Slow, obviously right."""
    words, freqs = _distinct_chunks(text, re.compile(pattern))
    merges = []
    for new_id in range(256, vocab_size):
        stats: Counter[tuple[int, int]] = Counter()
        for ids, freq in zip(words, freqs):
            for pair in zip(ids, ids[1:]):
                stats[pair] += freq
        if not stats:
            break
        pair = min(stats, key=lambda p: (-stats[p], p))
        merges.append(pair)
        words = [merge(ids, pair, new_id) for ids in words]
    return merges


class Tokenizer:
    """Merges in the order they were learned; id 256 + i is the i-th merge."""

    def __init__(self, merges: list[tuple[int, int]], pattern: bytes = SPLIT_PATTERN,
                 metadata: dict | None = None):
        self.pattern = pattern
        self._split = re.compile(pattern)
        self.merges = {tuple(pair): 256 + i for i, pair in enumerate(merges)}
        self.metadata = dict(metadata or {})
        self.vocab = [bytes([b]) for b in range(256)]
        for a, b in self.merges:
            self.vocab.append(self.vocab[a] + self.vocab[b])

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @classmethod
    def train(cls, text: bytes, vocab_size: int = 512, metadata: dict | None = None) -> Tokenizer:
        return cls(train_merges(text, vocab_size), SPLIT_PATTERN, metadata)

    # -- encoding
    def _encode_chunk(self, chunk: bytes) -> list[int]:
        ids = list(chunk)
        while len(ids) >= 2:
            # Apply merges in the order training learned them: the lowest id first.
            pair = min(zip(ids, ids[1:]), key=lambda p: self.merges.get(p, 1 << 30))
            if pair not in self.merges:
                break
            ids = merge(ids, pair, self.merges[pair])
        return ids

    def encode(self, data: bytes | str) -> list[int]:
        if isinstance(data, str):
            data = data.encode("utf-8")
        cache: dict[bytes, list[int]] = {}  # text repeats its words; encode each distinct one once
        ids: list[int] = []
        for chunk in split_chunks(data, self._split):
            if chunk not in cache:
                cache[chunk] = self._encode_chunk(chunk)
            ids.extend(cache[chunk])
        return ids

    # -- decoding
    def decode_bytes(self, ids) -> bytes:
        return b"".join(self.vocab[i] for i in ids)

    def decode(self, ids) -> str:
        # A sampled sequence can end (or wander) mid-character; show U+FFFD rather than fail.
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    # -- persistence
    def save(self, path: str | Path) -> None:
        from capstone.workspace import write_json

        write_json(Path(path), {
            "format": FORMAT,
            "split_pattern": self.pattern.decode("latin-1"),
            "vocab_size": self.vocab_size,
            "merges": [list(pair) for pair in self.merges],
            "metadata": self.metadata,
        })

    @classmethod
    def load(cls, path: str | Path) -> Tokenizer:
        from capstone.workspace import read_json  # capped JSON, no link followed: the file may be anyone's

        obj = read_json(Path(path))
        if obj.get("format") != FORMAT:
            raise CapstoneError(f"{path} is not a capstone tokenizer (format {obj.get('format')!r})")
        try:
            return cls([(int(a), int(b)) for a, b in obj["merges"]], obj["split_pattern"].encode("latin-1"),
                       obj.get("metadata"))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise CapstoneError(f"{path} is not a capstone tokenizer: run `capstone tokenize` again") from None


def compare_hf(train_text: bytes, val_text: bytes, ours: Tokenizer) -> dict | str:
    """Compression of HuggingFace's ByteLevel BPE trained on the same text at the same vocab
    size, or a message saying why the comparison was skipped. Optional: the course never
    needs `tokenizers`, and this function never installs it."""
    try:
        from tokenizers import ByteLevelBPETokenizer
    except ImportError:
        return "skipped --compare-hf: the `tokenizers` package is not installed (optional; pip install 'tokenizers<1')"
    hf = ByteLevelBPETokenizer()
    hf.train_from_iterator([train_text.decode("utf-8")], vocab_size=ours.vocab_size,
                           min_frequency=1, show_progress=False, special_tokens=[])
    hf_tokens = len(hf.encode(val_text.decode("utf-8")).ids)
    our_tokens = len(ours.encode(val_text))
    return {
        "val_bytes": len(val_text),
        "ours": {"tokens": our_tokens, "bytes_per_token": len(val_text) / our_tokens},
        "hf_tokenizers": {"tokens": hf_tokens, "bytes_per_token": len(val_text) / hf_tokens,
                          "vocab_size": hf.get_vocab_size()},
    }
