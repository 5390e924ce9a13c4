import pytest
import torch

from capstone import quantize as q
from capstone.export import export, load, save
from capstone.lora import mean_nll
from capstone.model import GPT, GPTConfig

TINY = dict(vocab_size=512, context=32, d_model=32, n_layer=2, n_head=2)


def test_export_with_dynamic_batch_and_sequence_saves_and_reloads_equal_to_eager(tmp_path):
    torch.manual_seed(0)
    model = GPT(GPTConfig(**TINY)).eval()
    path = tmp_path / "model.pt2"
    save(export(model), path)
    reloaded = load(path)
    with torch.no_grad():
        for batch, length in ((1, 1), (2, 8), (5, 17), (3, 32)):  # none of these is the example's (2, 8) only
            idx = torch.randint(512, (batch, length))
            torch.testing.assert_close(reloaded(idx), model(idx)[0], rtol=1e-5, atol=1e-5)
    with pytest.raises(Exception):  # the sequence dimension is bounded by the context
        reloaded(torch.randint(512, (1, 33)))


needs_int8 = pytest.mark.skipif(q.available() is not None, reason=str(q.available()))


@needs_int8
def test_int8_size_ratio_of_the_course_model():
    model = GPT(GPTConfig())
    report = q.size_report(model, q.quantize(model))
    assert report["ratio"] >= 2.98, report  # measured 3.005
    assert "blocks" in report["scope"]


@needs_int8
def test_int8_is_close_to_fp32_saves_reloads_and_raises_no_warnings(tokenized_workspace, tmp_path, recwarn):
    import numpy as np

    from capstone.data import load_split_tokens

    _, val, _ = load_split_tokens(tokenized_workspace)
    torch.manual_seed(0)
    model = GPT(GPTConfig(**TINY)).eval()
    qmodel = q.quantize(model)
    tokens = np.asarray(val[:4097])
    assert abs(mean_nll(qmodel, tokens) - mean_nll(model, tokens)) < 0.05
    q.save(qmodel, tmp_path / "int8.pt")
    again = q.load(tmp_path / "int8.pt")
    idx = torch.randint(512, (2, 32))
    with torch.no_grad():
        assert torch.equal(again(idx)[0], qmodel(idx)[0])
    assert not [w for w in recwarn if "quantiz" in str(w.message) or "TypedStorage" in str(w.message)]
    # The original model is untouched (a copy was quantized).
    assert type(model.blocks[0].attn.qkv) is torch.nn.Linear


def test_missing_quantization_api_gives_a_clear_message(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("torch.ao.quantization"):
            raise ImportError("No module named 'torch.ao.quantization'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    message = q.available()
    assert message and "torchao" in message
    from capstone import CapstoneError
    with pytest.raises(CapstoneError, match="torchao"):
        q.quantize(GPT(GPTConfig(**TINY)))
