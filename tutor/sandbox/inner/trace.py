"""Running a snippet traced: a record call after every statement, added by rewriting its syntax tree.

After each top-level statement of the code, each statement of a top-level loop's body (per
iteration, and of the loops nested in it), each statement inside a top-level ``if``, ``with``
or ``try`` (and the loops in those), and each statement in the body of the function named
by ``TraceSpec.function`` (its ``if``, ``with`` and ``try`` blocks too), the recorder looks
at the names in that scope and writes a row for every tensor-valued name the statement bound or changed
(a new object, or the same one with a new ``_version``, shape, stride, ``requires_grad``,
``grad_fn`` or gradient). ``sys.settrace`` would see the same lines, but it slows every
Python frame the snippet enters (``nn.Module.__call__``, the optimizer's step);
``benchmarks/bench_trace.py`` measures both.

The rewrite keeps the code's meaning: original statements keep their line numbers (the
traceback of an exception names the learner's line), the record call is a plain
expression statement added after each one (never after ``return``, ``raise``, ``break``,
``continue``, nor before a ``from __future__`` import), and its name is one the code does not
contain. The recorder never raises into the snippet, never touches the random number
generators, and computes its statistics without autograd and without bumping a version.
Standard library and torch only.
"""

from __future__ import annotations

import ast
import sys
import weakref

from tutor.sandbox.inner.describe import numpy_scalar
from tutor.sandbox.wire.trace import (MAX_HOLDS, MAX_LOOP_DEPTH, MAX_TRACE_BYTES, MAX_TRACE_NAMES, MAX_TRACE_ROWS,
                                      MAX_TRACE_STATEMENTS, TensorState, Trace, TraceRow, TraceSpec, wire_float)

RECORDER = "__tutor_trace__"
NAME_CHARS = 200  # a name as the wire's reader keeps it
STATS_LIMIT = 1 << 24  # elements: past this, a tensor's statistics are not computed (not measurable)
_STRIDED = None  # torch.strided, set by Recorder (this module is imported before torch is)
_ENDS_FLOW = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_BLOCKS = (ast.If, ast.With, ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


def recorder_name(source: str) -> str:
    """A name for the record call that the source never mentions (so it cannot collide)."""
    name, n = RECORDER, 0
    while name in source:
        n += 1
        name = f"{RECORDER}{n}"
    return name


def _record_call(name: str, stmt: ast.stmt, loops: tuple[int, ...]) -> ast.stmt:
    args: list[ast.expr] = [ast.Constant(stmt.lineno)]
    if loops:
        args.append(ast.Constant(loops))
    return ast.copy_location(ast.Expr(ast.Call(ast.Name(name, ast.Load()), args, [])), stmt)


def _method_call(name: str, method: str, loop: int, stmt: ast.stmt) -> ast.stmt:
    call = ast.Call(ast.Attribute(ast.Name(name, ast.Load()), method, ast.Load()), [ast.Constant(loop)], [])
    return ast.copy_location(ast.Expr(call), stmt)


def _after_each(body: list[ast.stmt], name: str, loops: tuple[int, ...] | None = None,
                counter: list[int] | None = None, spans: dict | None = None) -> list[ast.stmt]:
    """``body`` with a record call after each statement.

    ``loops`` (top level only; None inside a function): the loops this body is in. A loop's
    own body is recorded per iteration, and nested loops inside it too: each loop is
    numbered, reset before it starts and counted at the top of each pass, so a row says
    which iteration it is from. ``spans``: each loop's body lines, by number (see ``raised_in``).
    """
    # nothing may come before a `from __future__` import but a docstring: records start after the last one
    futures = [i for i, stmt in enumerate(body) if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"]
    start = futures[-1] + 1 if futures else 0
    out: list[ast.stmt] = list(body[:start])
    for stmt in body[start:]:
        if loops is not None and counter is not None and isinstance(stmt, (ast.For, ast.While)):
            loop = counter[0] = counter[0] + 1
            if spans is not None:
                spans[loop] = (stmt.body[0].lineno, max(s.end_lineno or s.lineno for s in stmt.body))
            inner = _after_each(stmt.body, name, loops + (loop,), counter, spans)
            stmt.body = [_method_call(name, "iterate", loop, stmt.body[0])] + inner
            stmt.orelse = _after_each(stmt.orelse, name, loops, counter, spans) if stmt.orelse else []
            out.append(_method_call(name, "begin", loop, stmt))
        elif isinstance(stmt, _BLOCKS):
            # the statements inside an if, a with or a try are recorded one by one too (a `with
            # torch.no_grad():` update, a branch), and a loop inside them per pass like any other
            for field in ("body", "orelse", "finalbody"):
                inside = getattr(stmt, field, None)
                if inside:
                    setattr(stmt, field, _after_each(inside, name, loops, counter, spans))
            for handler in getattr(stmt, "handlers", ()):
                handler.body = _after_each(handler.body, name, loops, counter, spans)
        out.append(stmt)
        if isinstance(stmt, _ENDS_FLOW):
            continue
        out.append(_record_call(name, stmt, loops or ()))
    return out


def instrument(source: str, filename: str, function: str, name: str, spans: dict | None = None):
    """The code object of ``source`` with a record call after each statement (SyntaxError as compile raises it).

    ``spans``, when given, is filled with each top-level loop's body lines, by loop number."""
    tree = ast.parse(source, filename)
    for node in ast.walk(tree):
        if function and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            node.body = _after_each(node.body, name)
    tree.body = _after_each(tree.body, name, (), [0], spans)
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec")


# ---------------------------------------------------------------- what a tensor looks like after a statement


def _stats(t, torch) -> dict:
    """min/max/mean of the non-NaN values and the NaN/Inf counts; {} when not measurable."""
    if t.is_meta or t.numel() == 0 or t.numel() > STATS_LIMIT or t.is_quantized:
        return {}
    if t.layout != torch.strided:
        t = t.coalesce().values() if t.layout == torch.sparse_coo else t.values()
        if t.numel() == 0:
            return {}
    if t.is_complex():
        return {"nan": int(torch.isnan(t).sum()), "inf": int(torch.isinf(t).sum())}
    if t.dtype == torch.bool:
        count = int(t.sum())
        return {"min": float(count == t.numel()), "max": float(count > 0), "mean": count / t.numel(),
                "nan": 0, "inf": 0}
    if not t.is_floating_point():
        low, high = torch.aminmax(t)
        return {"min": float(low), "max": float(high), "mean": float(t.sum(dtype=torch.float64)) / t.numel(),
                "nan": 0, "inf": 0}
    f = t if t.dtype in (torch.float32, torch.float64) else t.float()
    if bool(torch.isfinite(f).all()):  # the common case, in few kernels: the trace runs after every line
        low, high = (float(x) for x in torch.aminmax(f))
        return {"min": wire_float(low), "max": wire_float(high), "mean": wire_float(float(f.mean(dtype=torch.float64))),
                "nan": 0, "inf": 0}
    nan_mask = torch.isnan(f)
    nan, inf = int(nan_mask.sum()), int(torch.isinf(f).sum())
    if nan == f.numel():
        return {"nan": nan, "inf": inf}
    if nan:
        low, high = float(f.masked_fill(nan_mask, float("inf")).min()), float(f.masked_fill(nan_mask, -float("inf")).max())
        mean = float(torch.nanmean(f.double()))
    else:
        low, high = (float(x) for x in torch.aminmax(f))
        mean = float(f.mean(dtype=torch.float64))
    return {"min": wire_float(low), "max": wire_float(high), "mean": wire_float(mean), "nan": nan, "inf": inf}


def _key(t) -> tuple:
    """What "changed" means for a name bound to the same tensor object (``id`` first; see ``_same``)."""
    try:
        version = t._version
    except Exception:  # noqa: BLE001 - inference tensors have no version counter
        version = None
    grad_fn = t.grad_fn
    return (id(t), version, tuple(t.shape), _stride(t), t.requires_grad, type(grad_fn).__name__ if grad_fn else None,
            id(t.grad) if t.is_leaf and t.requires_grad and t.grad is not None else None)


def _same(last, t, key: tuple) -> bool:
    """Still the object of the last row, unchanged: an ``id`` alone is reused once the old object is freed."""
    if last is None:
        return False
    ref, old = last
    return old == key and (ref is None or ref() is t)


def _remember(value, key: tuple):
    try:
        return weakref.ref(value), key
    except TypeError:  # an int, a str: compared by id and type only
        return None, key


def _stride(t):
    if t.layout is not _STRIDED:
        return None
    try:
        return tuple(t.stride())
    except Exception:  # noqa: BLE001 - sparse and other non-strided layouts
        return None


def _storage(t) -> int:
    """The storage's address (0: none to share: meta, sparse, empty)."""
    try:
        return 0 if t.is_meta else t.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001
        return 0


def _tensor_state(name: str, t, shares: tuple[str, ...], torch) -> TensorState:
    key = _key(t)
    try:
        stats = _stats(t.detach(), torch)
    except Exception:  # noqa: BLE001 - a dtype or layout the reductions do not support
        stats = {}
    return TensorState(
        name=name, shape=tuple(int(d) for d in t.shape), dtype=str(t.dtype), device=str(t.device),
        layout=str(t.layout).replace("torch.", ""), stride=key[3],
        offset=t.storage_offset() if key[3] is not None else None, shares=shares, version=key[1],
        requires_grad=t.requires_grad, grad_fn=key[5], is_leaf=t.is_leaf, has_grad=key[6] is not None, **stats)


def _value_state(name: str, value) -> TensorState:
    plain = numpy_scalar(value)  # np.float32(nan) is a number too; its type is still shown
    number = plain if plain is not None else value
    number = number if isinstance(number, (int, float)) and not isinstance(number, bool) else None
    if isinstance(number, int) and abs(number) >= 1 << 53:
        number = float(number)
    stats = {}
    if number is not None:
        f = float(number)
        stats = {"min": wire_float(f), "max": wire_float(f), "mean": wire_float(f), "nan": int(f != f),
                 "inf": int(f in (float("inf"), -float("inf"))), "value": wire_float(f)}
    return TensorState(name=name, kind="value", type=type(value).__name__, **stats)


# ---------------------------------------------------------------- the recorder


class Recorder:
    """Called after each statement with its line; appends a row when a tensor-valued name changed."""

    def __init__(self, spec: TraceSpec, torch, function: str = ""):
        global _STRIDED
        self.spec, self.torch, self.function = spec, torch, function
        _STRIDED = torch.strided
        self.rows: list[dict] = []
        self.cut = 0
        self.size = 0
        self.last: dict[tuple[str, str], tuple] = {}  # (scope, name) -> the key it had at its last row
        self.holds_last: dict[tuple[str, str], str] = {}
        self.holds = [(n, e, compile(e, "<contract>", "eval")) for n, e in spec.holds[:MAX_HOLDS]]
        self.watch = set(spec.watch)
        self.hidden: set[str] = set()  # the recorder's own name
        self.statements = 0  # record calls so far (``MAX_TRACE_STATEMENTS``)
        self.passes: dict[int, int] = {}  # loop number -> its current pass (1-based)
        self.iteration: tuple[int, ...] = ()  # of the statement being recorded: each enclosing loop's pass

    def prime(self, namespace: dict) -> None:
        """What setup bound is the starting point: only a change to it makes a row.

        A ``holds:`` expression on a name setup bound is evaluated here too: the first line
        after which it is false is the one that made it false. One already false before the
        code ran is a row of its own at line 0 (no line of the code made it so), never
        blamed on line 1, nor missed because it never changed afterwards.
        """
        for name, value in namespace.items():
            if isinstance(value, self.torch.Tensor):
                self.last[("", name)] = _remember(value, _key(value))
        holds = self._holds("", namespace, namespace)
        failing = tuple((name, result) for name, result in holds if result != "true")
        if failing:
            self._append(TraceRow(line=0, holds=failing))

    def begin(self, loop: int) -> None:
        """A top-level loop (or one nested in it) is about to start: its passes count from 1 again."""
        self.passes[loop] = 0

    def iterate(self, loop: int) -> None:
        self.passes[loop] = self.passes.get(loop, 0) + 1

    def __call__(self, line: int, loops: tuple[int, ...] = ()) -> None:
        self.statements += 1
        if self.cut or self.statements > MAX_TRACE_STATEMENTS:
            self.cut += 1  # past the caps the rest runs untraced, at the cost of a call: a long loop stays cheap
            return
        try:
            frame = sys._getframe(1)
            scope = "" if frame.f_code.co_name == "<module>" else frame.f_code.co_name
            self.iteration = tuple(self.passes.get(k, 0) for k in loops)
            self._record(line, scope, frame.f_locals, frame.f_globals)
        except Exception:  # noqa: BLE001 - the trace must never change what the snippet does
            pass
        finally:
            frame = None

    def _record(self, line: int, scope: str, local: dict, global_: dict) -> None:
        torch = self.torch
        tensors, values = {}, {}
        for name, value in local.items():
            if name in self.hidden:
                continue
            if isinstance(value, torch.Tensor):
                tensors[name] = value
            elif name in self.watch:
                values[name] = value
        keys = {n: _key(t) for n, t in tensors.items()}
        keys.update((n, ("value", id(v), type(v).__name__)) for n, v in values.items())
        objects = {**tensors, **values}
        changed = [n for n, key in keys.items() if not _same(self.last.get((scope, n)), objects[n], key)]
        # a function's locals start afresh at every call: only a top-level name can be deleted
        gone = [] if scope else sorted(n for (s, n) in self.last if not s and n not in tensors and n not in values)
        holds = self._holds(scope, local, global_)
        if not changed and not gone and not holds:
            return
        with torch.no_grad():
            storages = {n: _storage(t) for n, t in tensors.items()}
            states = []
            for name in changed[:MAX_TRACE_NAMES]:
                shown = name[:NAME_CHARS]
                if name in tensors:
                    ptr = storages[name]
                    shares = tuple(sorted(o for o, p in storages.items() if o != name and ptr and p == ptr))
                    shares = tuple(n[:NAME_CHARS] for n in shares[:MAX_TRACE_NAMES])
                    states.append(_tensor_state(shown, tensors[name], shares, torch))
                else:
                    states.append(_value_state(shown, values[name]))
        for name in changed:
            self.last[(scope, name)] = _remember(objects[name], keys[name])
        for name in gone:
            del self.last[(scope, name)]
        row = TraceRow(line=line, scope=scope[:NAME_CHARS], iteration=self.iteration, names=tuple(states),
                       gone=tuple(g[:NAME_CHARS] for g in gone[:MAX_TRACE_NAMES]),
                       more=max(0, len(changed) - MAX_TRACE_NAMES), holds=tuple(holds))
        self._append(row)

    def _holds(self, scope: str, local: dict, global_: dict) -> list[tuple[str, str]]:
        """Each `holds:` expression whose name is visible here, where its result changed."""
        out = []
        for name, text, code in self.holds:
            if name not in local and name not in global_:
                continue
            try:
                result = "true" if bool(eval(code, global_, local)) else "false"
            except NameError:  # it reads a name the code has not bound yet: nothing to hold so far
                continue
            except Exception as exc:  # noqa: BLE001 - a failing expression is an observation, not a crash
                result = f"error: {type(exc).__name__}: {str(exc)[:200]}"
            if self.holds_last.get((scope, name)) != result:
                self.holds_last[(scope, name)] = result
                out.append((name, result))
        return out

    def _append(self, row: TraceRow) -> None:
        size = _estimate(row)
        if len(self.rows) >= MAX_TRACE_ROWS or self.size + size > MAX_TRACE_BYTES:
            self.cut = 1
            return
        self.size += size
        self.rows.append(row)

    def result(self) -> Trace:
        return Trace(rows=list(self.rows), cut=self.cut)

    def raised_in(self, exc: BaseException, filename: str, spans: dict) -> tuple[int, ...]:
        """The pass of each loop whose body the code's own top-level line was in when ``exc`` escaped.

        Read from the traceback's frame of the code itself (its line is the statement that raised,
        or the call it raised under) and the loops' spans, so no statement pays for it. A loop's
        header raising (the next item, the condition) is between passes: that loop is not counted.
        """
        tb, line = exc.__traceback__, None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename and tb.tb_frame.f_code.co_name == "<module>":
                line = tb.tb_lineno
            tb = tb.tb_next
        if line is None:
            return ()
        inside = sorted((start, loop) for loop, (start, end) in spans.items() if start <= line <= end)
        return tuple(self.passes.get(loop, 0) for _, loop in inside)[:MAX_LOOP_DEPTH]


STATE_BYTES = 420  # a state's JSON with every key and short values (measured: ~330); the rest is added


def _estimate(row: TraceRow) -> int:
    """An upper bound of the row's JSON size, without encoding it (that was half the trace's cost)."""
    size = 100 + 22 * len(row.iteration) + sum(len(g) + 4 for g in row.gone) + sum(len(n) + len(r) + 8 for n, r in row.holds)
    for s in row.names:
        size += STATE_BYTES + len(s.name) + len(s.type) + len(s.grad_fn or "") + len(s.dtype) + len(s.device)
        size += 22 * (len(s.shape or ()) + len(s.stride or ())) + sum(len(n) + 4 for n in s.shares)
    return size


def run_traced(source: str, filename: str, namespace: dict, spec: TraceSpec, torch, run_code) -> tuple:
    """Run ``source`` traced in ``namespace``; (raised, error, trace). ``run_code`` is the runner's ``_run``.

    The record call is bound in the namespace for the run and removed after it, so
    nothing the runner describes or exports afterwards sees it.
    """
    name = recorder_name(source)
    recorder = Recorder(spec, torch)
    recorder.hidden = {name}
    recorder.prime(namespace)
    spans: dict[int, tuple[int, int]] = {}
    try:
        code = instrument(source, filename, spec.function, name, spans)
    except SyntaxError:
        raised, error = run_code(source, filename, namespace, "code")  # reports the error as the runner does
        return raised, error, Trace(problem="the code does not compile, so it was not traced")
    namespace[name] = recorder
    try:
        raised, error = run_code(code, filename, namespace, "code")
    finally:
        namespace.pop(name, None)
    trace = recorder.result()
    if raised is not None:
        try:
            trace.raised_in = recorder.raised_in(raised, filename, spans)
        except Exception:  # noqa: BLE001 - a detail of the report, never a reason to lose the run
            pass
    return raised, error, trace
