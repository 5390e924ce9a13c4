import pytest
import torch

from capstone.generate import KVCache, generate, next_token, stream, top_p_filter
from capstone.model import GPT, GPTConfig

TINY = dict(vocab_size=512, context=32, d_model=32, n_layer=2, n_head=2)


def tiny_model(seed=0, **overrides):
    torch.manual_seed(seed)
    return GPT(GPTConfig(**(TINY | overrides))).eval()


def test_default_model_unchanged_by_the_cache_path():
    assert GPT(GPTConfig()).num_parameters() == 875_264
    model = tiny_model()
    idx = torch.randint(512, (2, 20))
    # Prefill through an empty cache = the plain forward pass.
    plain, _ = model(idx)
    cached, _ = model(idx, kv_cache=KVCache(model))
    torch.testing.assert_close(cached, plain, rtol=0, atol=1e-6)


@pytest.mark.parametrize("temperature, top_k", [(0.0, None), (1.0, 10)])
def test_cached_and_uncached_logits_agree_at_every_step(temperature, top_k, one_thread):
    model = tiny_model()
    prompt = torch.randint(512, (2, 5))
    # 40 new tokens on context 32: the last steps run past the context (the crop-and-recompute path).
    runs = [list(stream(model, prompt, 40, temperature, top_k, torch.Generator().manual_seed(7), use_cache=c))
            for c in (True, False)]
    for step, ((id_c, logits_c), (id_u, logits_u)) in enumerate(zip(*runs)):
        assert (logits_c - logits_u).abs().max().item() <= 1e-5, f"step {step}"
        assert torch.equal(id_c, id_u), f"step {step}"
    assert len(runs[0]) == 40


def test_cached_generate_matches_the_reference_sampler(one_thread):
    model = tiny_model(seed=1)
    prompt = torch.randint(512, (1, 3))
    ref = generate(model, prompt, 25, 0.8, 20, torch.Generator().manual_seed(3), use_cache=False)
    out = generate(model, prompt, 25, 0.8, 20, torch.Generator().manual_seed(3))
    assert torch.equal(out, ref)
    # Same seed, same text; another seed, other text.
    again = generate(model, prompt, 25, 0.8, 20, torch.Generator().manual_seed(3))
    other = generate(model, prompt, 25, 0.8, 20, torch.Generator().manual_seed(4))
    assert torch.equal(out, again) and not torch.equal(out, other)


def test_cache_refuses_to_overflow_the_context():
    model = tiny_model()
    cache = KVCache(model)
    model(torch.randint(512, (1, 30)), kv_cache=cache)
    assert cache.length == 30
    with pytest.raises(ValueError, match="exceeds the context"):
        model(torch.randint(512, (1, 3)), kv_cache=cache)


def test_a_chunk_after_cached_positions_is_masked_by_offset():
    model = tiny_model()
    idx = torch.randint(512, (2, 20))
    full, _ = model(idx)
    cache = KVCache(model)
    first, _ = model(idx[:, :7], kv_cache=cache)
    second, _ = model(idx[:, 7:], kv_cache=cache)  # 13 queries after 7 cached positions
    torch.testing.assert_close(torch.cat([first, second], dim=1), full, rtol=0, atol=1e-5)


def test_top_p_keeps_the_token_that_crosses_p_and_renormalises():
    flat = torch.tensor([[2.0, 1.0, 0.5, -1.0]])  # probabilities 0.61, 0.22, 0.14, 0.03
    kept = top_p_filter(flat, 0.9)
    assert torch.isfinite(kept).sum() == 3 and not torch.isfinite(kept[0, 3])
    assert torch.isfinite(top_p_filter(torch.tensor([[6.0, 1.0, 0.5, -1.0]]), 0.9)).sum() == 1
    # Sampling with top_p never draws a token outside the nucleus.
    draws = {int(next_token(flat, 1.0, None, torch.Generator().manual_seed(s), top_p=0.5)) for s in range(50)}
    assert draws <= {0, 1} and 0 in draws


class Scripted(torch.nn.Module):
    """A 'model' whose next token is scripted per row: for driving the loop, not the maths."""

    def __init__(self, picks, vocab=16):
        super().__init__()
        self.picks, self.vocab, self.calls = picks, vocab, 0

    def forward(self, idx):
        logits = torch.full((idx.size(0), idx.size(1), self.vocab), -1e9)
        logits[torch.arange(idx.size(0)), -1, self.picks[:, self.calls]] = 0.0
        self.calls += 1
        return logits


def test_a_stop_token_pads_finished_rows_and_ends_when_all_have_stopped():
    picks = torch.tensor([[5, 0, 7, 7, 7, 7], [3, 4, 2, 0, 9, 9]])
    out = generate(Scripted(picks), torch.ones(2, 1, dtype=torch.long), 6, temperature=0.0,
                   use_cache=False, stop_token=0, context=8)
    assert out[:, 1:].tolist() == [[5, 0, 0, 0], [3, 4, 2, 0]]
    # Without a stop token the loop runs for max_new_tokens and row 0 carries text after its EOS.
    out = generate(Scripted(picks), torch.ones(2, 1, dtype=torch.long), 6, temperature=0.0,
                   use_cache=False, context=8)
    assert out[0, 1:].tolist() == [5, 0, 7, 7, 7, 7]
