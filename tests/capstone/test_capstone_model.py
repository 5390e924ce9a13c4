import math

import torch

from capstone.model import GPT, GPTConfig


def test_default_config_has_exactly_875264_parameters():
    model = GPT(GPTConfig())
    assert model.num_parameters() == 875_264
    # The head is tied, not a second 512 x 128 matrix.
    assert model.head.weight is model.tok_emb.weight
    assert sum(p.numel() for p in model.state_dict().values()) == 875_264 + 512 * 128


def test_layer_names_later_modules_depend_on():
    names = {name for name, _ in GPT(GPTConfig()).named_modules()}
    for i in range(4):
        for leaf in ("attn.qkv", "attn.proj", "mlp.fc", "mlp.proj"):
            assert f"blocks.{i}.{leaf}" in names


def test_init_starts_near_uniform_prediction():
    torch.manual_seed(0)
    model = GPT(GPTConfig())
    idx, targets = torch.randint(512, (2, 4, 128))
    logits, loss = model(idx, targets)
    assert logits.shape == (4, 128, 512)
    assert abs(loss.item() - math.log(512)) < 0.1  # N(0, 0.02) init, not PyTorch's defaults
    # Residual projections are scaled by 1/sqrt(2 * n_layer).
    assert abs(model.blocks[0].mlp.proj.weight.std().item() - 0.02 / math.sqrt(8)) < 0.001


def test_forward_without_targets_and_causality():
    torch.manual_seed(0)
    model = GPT(GPTConfig()).eval()
    idx = torch.randint(512, (1, 20))
    logits, loss = model(idx)
    assert loss is None
    changed = idx.clone()
    changed[0, 10] = (changed[0, 10] + 1) % 512
    logits2, _ = model(changed)
    # Positions before the change cannot see it; the changed position and later ones do.
    assert torch.equal(logits[0, :10], logits2[0, :10])
    assert not torch.allclose(logits[0, 10], logits2[0, 10])


def test_targets_may_be_a_shifted_slice():
    model = GPT(GPTConfig(vocab_size=64, context=16, d_model=16, n_layer=1, n_head=2))
    window = torch.randint(64, (3, 17))
    _, loss = model(window[:, :-1], window[:, 1:])  # a non-contiguous view
    _, expected = model(window[:, :-1], window[:, 1:].contiguous())
    assert torch.equal(loss, expected)


def test_the_model_depends_on_torch_and_the_config_only():
    # Stage 32 must not need stage 31: its loss mask value is its own, equal to data's.
    import ast
    from pathlib import Path

    import capstone.data
    import capstone.model

    tree = ast.parse(Path(capstone.model.__file__).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names} | {
        n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert {m for m in imported if m.startswith("capstone")} == {"capstone.config"}
    assert capstone.model.IGNORE_INDEX == capstone.data.IGNORE_INDEX
