"""Benchmark: what the line-by-line trace costs, measured side by side in one run.

Two workloads, each run untraced, traced by the AST rewrite the sandbox uses
(``tutor/sandbox/inner/trace.py``), and traced by ``sys.settrace`` (the alternative the
rewrite was chosen over, built here from the same recorder):

* a 30-line drill (top-level tensor statements: views, reductions, matmuls, in-place ops);
* a 20-step training loop of a small MLP whose ``step`` function is traced inside;
* the same 20 steps written in the top-level loop's body (recorded on every pass).

The in-process figures run the runner's own body (``run_request``) without a sandbox, so
they measure the trace and nothing else; ``--sandbox`` adds the same runs end to end
through the real sandbox (a fresh confined process each, noisier on a loaded machine).

    .venv/bin/python benchmarks/bench_trace.py [--repeats 15] [--sandbox]

Targets (issue 14): traced 30-line drill <= 50 ms more than untraced; traced training loop
<= 3x untraced.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from tutor.sandbox.inner import runner, trace  # noqa: E402
from tutor.sandbox.wire import RunRequest, TraceSpec  # noqa: E402

DRILL_TARGET_MS = 50.0
LOOP_TARGET_RATIO = 3.0

SETUP = "import torch\nimport torch.nn.functional as F\n"
DRILL = "\n".join([
    "x = torch.randn(64, 32)", "w = torch.randn(32, 16, requires_grad=True)", "b = torch.zeros(16)",
    "h = x @ w", "h = h + b", "a = torch.relu(h)", "t = a.t()", "c = t.contiguous()", "v = c.view(-1)",
    "s = v[::2]", "m = a.mean(dim=0)", "sd = a.std(dim=0)", "z = (a - m) / (sd + 1e-5)", "z.clamp_(-3, 3)",
    "e = z.exp()", "p = e / e.sum(dim=1, keepdim=True)", "lp = p.log()", "ids = torch.arange(64) % 16",
    "nll = -lp[torch.arange(64), ids]", "loss = nll.mean()", "loss.backward()", "g = w.grad",
    "q = g.abs().max()", "r = torch.cat([x, x], dim=1)", "u = r.unsqueeze(0).expand(3, 64, 64)",
    "k = u.sum(0)", "mask = k > 0", "kk = k.masked_fill(mask, 0.0)", "n = torch.isfinite(kk).all()",
    "out = kk.flatten()[:10]",
]) + "\n"
assert len(DRILL.splitlines()) == 30
LOOP = """\
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(20, 16, 32)
Y = torch.randint(0, 10, (20, 16))
def step(x, y):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss
for i in range(20):
    loss = step(X[i], Y[i])
"""
# the same 20 steps written in the loop's body: since the body of a top-level loop is recorded on
# every pass, this is the trace's heaviest common shape (5 recorded statements a step)
INLINE_LOOP = LOOP.split("def step")[0] + """for i in range(20):
    logits = model(X[i])
    loss = F.cross_entropy(logits, Y[i])
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def _namespace(request: RunRequest) -> dict:
    namespace: dict = {"__name__": "__main__"}
    exec(compile(request.setup, "<setup>", "exec"), namespace)
    return namespace


def exec_untraced(request: RunRequest) -> float:
    """The code alone (setup excluded), as the two traced variants below are timed."""
    namespace, code = _namespace(request), compile(request.code, "<snippet>", "exec")
    started = time.perf_counter()
    exec(code, namespace)
    return time.perf_counter() - started


def exec_rewritten(request: RunRequest) -> float:
    """The sandbox's way: a record call after each statement (``trace.run_traced`` without the runner)."""
    namespace = _namespace(request)
    recorder = trace.Recorder(request.trace, torch)
    recorder.prime(namespace)
    name = trace.recorder_name(request.code)
    code = trace.instrument(request.code, "<snippet>", request.trace.function, name)
    namespace[name] = recorder
    started = time.perf_counter()
    exec(code, namespace)
    return time.perf_counter() - started


def exec_settrace(request: RunRequest) -> float:
    """The alternative: the same recorder driven by ``sys.settrace`` line events of the traced frames."""
    namespace = _namespace(request)
    recorder = trace.Recorder(request.trace, torch)
    recorder.prime(namespace)
    function = request.trace.function
    code = compile(request.code, "<snippet>", "exec")
    last_line: dict[int, int] = {}

    def local(frame, event, arg):
        if event in ("line", "return") and id(frame) in last_line:  # the previous line has finished
            scope = "" if frame.f_code.co_name == "<module>" else frame.f_code.co_name
            recorder._record(last_line[id(frame)], scope, frame.f_locals, frame.f_globals)
        if event == "line":
            last_line[id(frame)] = frame.f_lineno
        return local

    def calls(frame, event, arg):  # called for every Python frame the code enters (torch's too)
        if frame.f_code.co_filename == "<snippet>" and frame.f_code.co_name in ("<module>", function):
            return local
        return None

    started = time.perf_counter()
    sys.settrace(calls)
    try:
        exec(code, namespace)
    finally:
        sys.settrace(None)
    return time.perf_counter() - started


def in_process(request: RunRequest) -> float:
    started = time.perf_counter()
    obs, _ = runner.run_request(request, torch)
    assert obs.error is None, obs.error
    return time.perf_counter() - started


def median_ms(fn, repeats: int) -> float:
    fn()  # warm: first-call costs (kernels, autograd) are not the trace's
    return statistics.median(fn() for _ in range(repeats)) * 1000


def sandboxed(plain: RunRequest, traced: RunRequest, sandbox, repeats: int) -> tuple[float, float]:
    """Medians (ms) of the two, interleaved so that a busy moment of the machine hits both alike."""
    from tutor.sandbox.client import run_sync

    def once(request: RunRequest) -> float:
        result = run_sync(request, sandbox)
        assert result.ok and result.observation.error is None, result.message
        return result.seconds * 1000

    once(plain), once(traced)  # warm
    pairs = [(once(plain), once(traced)) for _ in range(repeats)]
    return statistics.median(p for p, _ in pairs), statistics.median(t for _, t in pairs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--sandbox", action="store_true", help="also measure end to end through the real sandbox")
    args = parser.parse_args()
    torch.set_num_threads(1)

    cases = [("30-line drill", DRILL, TraceSpec()), ("20-step training loop", LOOP, TraceSpec(function="step")),
             ("20 steps in a loop body", INLINE_LOOP, TraceSpec())]
    rows = {}
    for name, code, spec in cases:
        plain = RunRequest(code=code, setup=SETUP)
        traced = RunRequest(code=code, setup=SETUP, trace=spec)
        # the runner's whole body (setup, code, describing the names), untraced and traced
        base, rewrite = median_ms(lambda: in_process(plain), args.repeats), median_ms(lambda: in_process(traced),
                                                                                       args.repeats)
        # the code alone, three ways, on the same basis
        alone = median_ms(lambda: exec_untraced(traced), args.repeats)
        ast_only = median_ms(lambda: exec_rewritten(traced), args.repeats)
        settrace = median_ms(lambda: exec_settrace(traced), args.repeats)
        rows[name] = (base, rewrite)
        print(f"{name}:")
        print(f"  runner, untraced {base:7.1f} ms   traced {rewrite:7.1f} ms   +{rewrite - base:6.1f} ms  "
              f"x{rewrite / base:4.2f}")
        print(f"  code alone {alone:7.1f} ms   AST rewrite {ast_only:7.1f} ms (x{ast_only / alone:4.2f})   "
              f"sys.settrace {settrace:7.1f} ms (x{settrace / alone:4.2f})")
    base, rewrite = rows["30-line drill"]
    print(f"target: traced 30-line drill <= {DRILL_TARGET_MS:.0f} ms more: +{rewrite - base:.1f} ms "
          f"[{'met' if rewrite - base <= DRILL_TARGET_MS else 'MISSED'}]")
    for name in ("20-step training loop", "20 steps in a loop body"):
        base, rewrite = rows[name]
        print(f"target: traced {name} <= {LOOP_TARGET_RATIO:.0f}x untraced: x{rewrite / base:.2f} "
              f"[{'met' if rewrite / base <= LOOP_TARGET_RATIO else 'MISSED'}]")

    if args.sandbox:
        from tutor.sandbox.client import Sandbox

        box = Sandbox()
        box.start_sync()
        try:
            for name, code, spec in cases:
                base, rewrite = sandboxed(RunRequest(code=code, setup=SETUP), RunRequest(code=code, setup=SETUP, trace=spec),
                                          box, max(5, args.repeats // 2))
                print(f"sandbox: {name:<24} untraced {base:7.1f} ms   traced {rewrite:7.1f} ms "
                      f"(+{rewrite - base:6.1f} ms, x{rewrite / base:4.2f})")
        finally:
            box.close_sync()
    return 0


if __name__ == "__main__":
    sys.exit(main())
