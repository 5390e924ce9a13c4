"""Fidelity: a snippet observes in the sandbox what it observes under a plain ``python``.

The harness (the zygote's warm-up, the fork, the confinement, how the code is compiled and
run) must leave no trace in what torch lets a snippet see. Each snippet of the corpus runs in
the sandbox and in a fresh ``python -I`` with the sandbox's seeds (``torch.manual_seed(0)``,
``random.seed(0)``, ``numpy.random.seed(0)``: the fence rules), and every line it prints must be
the same. A difference is a drill that teaches this harness instead of PyTorch.

The first case is the one that was found: Dynamo offers every Python frame it sees to its
frame counter, and an audit hook installed by the harness is a Python function called on every
audited event, so ``counters['frames']['total']`` read 4 in the sandbox and 3 under ``python``.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import textwrap

import pytest

from sandbox_helpers import run

pytestmark = pytest.mark.slow

SEEDS = "import random, numpy, torch\ntorch.manual_seed(0)\nrandom.seed(0)\nnumpy.random.seed(0)\n"

CORPUS = {
    "dynamo frame and graph counters": """
        import torch, torch._dynamo as dynamo
        from torch._dynamo.utils import counters
        dynamo.reset(); counters.clear()
        c = torch.compile(lambda t: t.sin() * 2, backend='eager')
        x = torch.ones(3)
        c(x); c(x); c(x.double()); c(torch.ones(3, requires_grad=True)); c(x)
        print(dict(counters['frames']), dict(counters['stats']))
    """,
    "dynamo counters left by whatever ran before": """
        import torch, torch._dynamo
        from torch._dynamo.utils import counters
        print(sorted((k, dict(v)) for k, v in counters.items()))
    """,
    "a graph break, counted": """
        import torch, torch._dynamo as dynamo
        from torch._dynamo.utils import counters
        dynamo.reset(); counters.clear()
        def f(t):
            t = t + 1
            print("inside")
            return t * 2
        torch.compile(f, backend='eager')(torch.ones(2))
        print(dict(counters['frames']), sum(counters['graph_break'].values()), dict(counters['stats']))
    """,
    "random draws after the seeds": """
        import random, numpy, torch
        print(torch.rand(3).tolist(), torch.randint(0, 100, (4,)).tolist(), torch.randn(2).tolist())
        print(random.random(), numpy.random.rand(2).tolist(), torch.initial_seed())
        g = torch.Generator().manual_seed(1)
        print(torch.rand(2, generator=g).tolist(), torch.random.get_rng_state().sum().item())
    """,
    "global modes and flags": """
        import torch
        print(torch.get_default_dtype(), torch.get_default_device(), torch.is_grad_enabled())
        print(torch.is_inference_mode_enabled(), torch.is_anomaly_enabled(), torch.are_deterministic_algorithms_enabled())
        print(torch.get_float32_matmul_precision(), torch.backends.quantized.engine, torch.backends.mkldnn.enabled)
        print(torch._C._len_torch_function_stack(), torch._C._len_torch_dispatch_stack())
        print(torch.autograd.graph.saved_tensors_hooks is not None, torch.compiler.is_compiling())
    """,
    "threads and kernels": """
        import torch
        print(torch.get_num_threads(), torch.get_num_interop_threads(), torch.backends.cpu.get_cpu_capability())
        print([line for line in torch.__config__.parallel_info().splitlines() if "threads" in line.lower()])
    """,
    "print options": """
        import numpy, torch
        print(torch.arange(12.0).reshape(3, 4) / 3)
        print(numpy.get_printoptions()["precision"], torch._tensor_str.PRINT_OPTS.precision)
    """,
    "an autograd graph and its saved tensors": """
        import torch
        x = torch.randn(3, requires_grad=True)
        y = (x.exp() * x).sum()
        print(type(y.grad_fn).__name__, [type(f).__name__ for f, _ in y.grad_fn.next_functions])
        y.backward()
        print(x.grad)
    """,
    "the snippet's globals are the __main__ module": """
        import pickle, sys, torch
        class Point:
            pass
        class Shifted(torch.nn.Module):
            def forward(self, x):
                return x + torch.ones(())   # a global read in forward: Dynamo guards it through __main__
        program = torch.export.export(Shifted(), (torch.ones(3),), strict=True)
        print(__name__, sys.modules["__main__"].__dict__ is globals(), type(pickle.loads(pickle.dumps(Point()))).__name__)
        print([node.op for node in program.graph.nodes])
    """,
}


@functools.lru_cache(maxsize=None)  # once per snippet, whichever tiers compare with it
def _plain(code: str) -> str:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent"}
    done = subprocess.run([sys.executable, "-I", "-c", SEEDS + code], env=env, cwd="/", capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("case", list(CORPUS))
def test_a_snippet_sees_what_plain_python_sees(sb, case):
    code = textwrap.dedent(CORPUS[case]).strip() + "\n"
    boxed = run(sb, code, timeout=60)
    assert boxed.ok and boxed.observation.error is None, boxed.message
    assert boxed.output.splitlines() == _plain(code).splitlines()
