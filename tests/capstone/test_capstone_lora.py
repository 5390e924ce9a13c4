import numpy as np
import torch

from capstone.data import load_split_tokens
import pytest

from capstone import CapstoneError
from capstone.lora import (LoRALinear, add_lora, apply_adapter, finetune, lora_state_dict, merge,
                           trainable_parameters, unmerge)
from capstone.model import GPT, GPTConfig

TINY = dict(vocab_size=512, context=32, d_model=32, n_layer=2, n_head=2)


def test_rank_8_on_the_course_model_trains_exactly_45056_parameters():
    model = add_lora(GPT(GPTConfig()), rank=8)
    assert trainable_parameters(model) == 45_056
    assert model.num_parameters() == 875_264 + 45_056
    assert len([m for m in model.modules() if isinstance(m, LoRALinear)]) == 12
    names = {n for n, p in model.named_parameters() if p.requires_grad}
    assert all(".lora_" in n for n in names)
    # The base weights keep their names: a base checkpoint loads into the adapted model.
    assert {k for k in model.state_dict() if ".lora_" not in k} == set(GPT(GPTConfig()).state_dict())
    assert sum(t.numel() for t in lora_state_dict(model).values()) == 45_056


def test_adapted_model_starts_as_the_base():
    torch.manual_seed(0)
    base = GPT(GPTConfig(**TINY)).eval()
    idx = torch.randint(512, (2, 16))
    expected, _ = base(idx)
    adapted = add_lora(base).eval()
    torch.testing.assert_close(adapted(idx)[0], expected, rtol=0, atol=0)  # B = 0


def test_finetune_keeps_the_base_bit_identical_merge_unmerge_and_improves_held_out(tokenized_workspace, one_thread):
    train, val, _ = load_split_tokens(tokenized_workspace)
    train, val = np.asarray(train), np.asarray(val)
    cut = int(len(val) * 0.75)  # fine-tune on the validation split's head, score on its tail
    torch.manual_seed(0)
    model = GPT(GPTConfig(**TINY))
    # A briefly pretrained base (every parameter trains here: no adapter yet). About 3 s.
    finetune(model, train, val[cut:], steps=40, batch_size=16, lr=1e-2)
    base = {k: v.clone() for k, v in model.state_dict().items()}
    add_lora(model, rank=8, alpha=16)
    result = finetune(model, val[:cut], val[cut:], steps=40, batch_size=16, lr=1e-2)

    # Frozen means frozen: every base tensor is bit-identical after fine-tuning.
    after = model.state_dict()
    for k, v in base.items():
        assert torch.equal(after[k], v), k
    assert any(t.abs().sum() > 0 for n, t in after.items() if n.endswith("lora_B"))

    # Fine-tuning on the slice's head improves nats/token on its unseen tail (measured: 5.360 -> 5.289).
    assert result["val_after"] < result["val_before"] - 0.03, result
    assert result["trainable_parameters"] == 2 * 8 * ((32 + 96) + (32 + 32) + (32 + 128))

    idx = torch.from_numpy(val[cut:cut + 64].astype(np.int64)).view(2, 32)
    model.eval()
    unmerged, _ = model(idx)
    merge(model)
    merged, _ = model(idx)
    torch.testing.assert_close(merged, unmerged, rtol=1e-5, atol=1e-5)
    unmerge(model)
    again, _ = model(idx)
    torch.testing.assert_close(again, unmerged, rtol=1e-5, atol=1e-5)
    for k, v in base.items():
        torch.testing.assert_close(model.state_dict()[k], v, rtol=0, atol=1e-6)


def test_an_adapter_whose_names_do_not_match_is_refused_not_silently_skipped():
    torch.manual_seed(0)
    trained = add_lora(GPT(GPTConfig(**TINY)))
    for layer in trained.modules():
        if isinstance(layer, LoRALinear):
            torch.nn.init.normal_(layer.lora_B)  # a trained adapter: B is no longer zero
    good = {"rank": 8, "alpha": 16.0, "targets": ["attn.qkv", "attn.proj", "mlp.fc"],
            "lora": lora_state_dict(trained)}
    idx = torch.randint(512, (1, 16))
    torch.manual_seed(1)
    loaded = apply_adapter(GPT(GPTConfig(**TINY)), good)
    assert all(torch.equal(loaded.state_dict()[k], v) for k, v in good["lora"].items())

    # Saved from a wrapper (DDP, torch.compile): every key has a prefix and matches nothing.
    prefixed = good | {"lora": {"module." + k: v for k, v in good["lora"].items()}}
    with pytest.raises(CapstoneError, match="match no LoRA parameter"):
        apply_adapter(GPT(GPTConfig(**TINY)), prefixed)
    # Half an adapter: the missing LoRA tensors would silently stay at their init.
    half = good | {"lora": {k: v for k, v in good["lora"].items() if "blocks.0." in k}}
    with pytest.raises(CapstoneError, match="got no tensor"):
        apply_adapter(GPT(GPTConfig(**TINY)), half)
    # What the check prevents: strict=False alone loads nothing and raises nothing.
    base = GPT(GPTConfig(**TINY)).eval()
    expected, _ = base(idx)
    add_lora(base)
    base.load_state_dict(prefixed["lora"], strict=False)
    torch.testing.assert_close(base(idx)[0], expected, rtol=0, atol=0)
