import pytest
import torch

from capstone.generate import KVCache, generate, stream
from capstone.model import GPT, GPTConfig
from capstone.sample import generate as uncached_generate

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
    ref = uncached_generate(model, prompt, 25, 0.8, 20, torch.Generator().manual_seed(3))
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
