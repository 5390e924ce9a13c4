import functools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from capstone.bpe import SPLIT_PATTERN, Tokenizer, split_chunks, train_merges, train_reference
from capstone.corpus import load_default

SPLIT = re.compile(SPLIT_PATTERN)


@functools.lru_cache(maxsize=None)
def small_text() -> bytes:
    # Prose, code and a little non-ASCII, small enough for the naive trainer.
    return load_default().text[:40_000] + "naïve café — 東京 ✓\n".encode() * 20


@functools.lru_cache(maxsize=None)
def small_tokenizer() -> Tokenizer:
    return Tokenizer.train(small_text(), vocab_size=400)


def test_incremental_training_learns_the_same_merges_as_a_full_recount():
    fast = train_merges(small_text(), 400)
    assert len(fast) == 144
    assert fast == train_reference(small_text(), 400)


def test_ties_go_to_the_smallest_pair():
    # Every pair occurs once; (32, 99) = " c" is the smallest.
    assert train_merges(b"ab cd", 257) == [(32, 99)]
    assert train_merges(b"ab cd", 300) == train_reference(b"ab cd", 300)  # stops when nothing is left


def test_training_is_deterministic():
    assert train_merges(small_text(), 400) == train_merges(small_text(), 400)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_round_trip_of_arbitrary_bytes(data):
    tokenizer = small_tokenizer()
    ids = tokenizer.encode(data)
    assert all(0 <= i < tokenizer.vocab_size for i in ids)
    assert tokenizer.decode_bytes(ids) == data


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_round_trip_of_text_and_chunks_cover_the_input(text):
    data = text.encode("utf-8")
    assert b"".join(split_chunks(data, SPLIT)) == data
    tokenizer = small_tokenizer()
    assert tokenizer.decode(tokenizer.encode(text)) == text


def test_encoding_reproduces_the_training_segmentation_and_compresses():
    tokenizer = small_tokenizer()
    ids = tokenizer.encode(small_text())
    assert len(small_text()) / len(ids) > 1.8  # 144 merges already roughly halve the length


def test_save_and_load(tmp_path):
    tokenizer = small_tokenizer()
    tokenizer.save(tmp_path / "tok.json")
    loaded = Tokenizer.load(tmp_path / "tok.json")
    assert loaded.merges == tokenizer.merges and loaded.vocab == tokenizer.vocab
    sample = "def f(x):\n    return x ** 2  # naïve\n".encode() + b"\xff\xfe"
    assert loaded.encode(sample) == tokenizer.encode(sample)


def test_apply_merge_keeps_the_counts_and_the_index_equal_to_a_full_recount():
    # The invariant the stage lab grades: after every merge, the incrementally updated counts and
    # pair -> chunks index are exactly what count_pairs finds from scratch (overlaps included).
    from capstone.bpe import _distinct_chunks, apply_merge, count_pairs, merge

    text = small_text()[:5_000] + b" aaaa aaaaa ***** " * 20
    words, freqs = _distinct_chunks(text, SPLIT)
    counts, where = count_pairs(words, freqs)
    ids_before = sum(map(len, words))
    for step, pair in enumerate(train_merges(text, 290)):
        changed = apply_merge(words, freqs, pair, 256 + step, counts, where)
        recount, rewhere = count_pairs(words, freqs)
        assert dict(counts) == dict(recount), f"merge {step}"
        assert {p: w for p, w in where.items() if w} == dict(rewhere), f"merge {step}"
        assert pair not in counts and all(counts[p] > 0 for p in changed)
    assert sum(map(len, words)) < ids_before  # the chunks were merged in place
