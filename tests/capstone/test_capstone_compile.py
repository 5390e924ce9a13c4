"""torch.compile on a tiny config. The cold Inductor compile (gcc) dominates: about 25-40 s on
2 busy cores, so the whole file is one compile."""

import shutil

import pytest
import torch

from capstone.compiled import compare_with_eager, explain, hermetic_cache, logged_step
from capstone.model import GPT, GPTConfig

TINY = dict(vocab_size=512, context=16, d_model=32, n_layer=1, n_head=2)

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None and shutil.which("cc") is None,
                                reason="Inductor's CPU backend needs a C compiler")


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")  # Inductor's own
def test_compiled_forward_and_backward_equal_eager_in_a_hermetic_cache(tmp_path):
    torch.manual_seed(0)
    model = GPT(GPTConfig(**TINY))
    idx, targets = torch.randint(512, (2, 2, 16))
    cache = tmp_path / "inductor"
    with hermetic_cache(cache):
        diff = compare_with_eager(model, idx, targets)
    assert diff["loss"] <= 1e-5 and diff["logits"] <= 1e-4 and diff["grads"] <= 1e-4, diff
    assert any(cache.iterdir()), "Inductor wrote nothing to the hermetic cache"


def test_graph_breaks_counted_and_explained():
    torch.manual_seed(0)
    model = GPT(GPTConfig(**TINY))
    idx, targets = torch.randint(512, (2, 2, 16))
    clean = explain(model, idx, targets)
    assert clean["graph_breaks"] == 0 and clean["graphs"] == 1, clean
    logged = explain(logged_step(model), idx, targets)
    assert logged["graph_breaks"] >= 1, logged
    assert any("item" in r.lower() for r in logged["reasons"]), logged
    torch._dynamo.reset()
