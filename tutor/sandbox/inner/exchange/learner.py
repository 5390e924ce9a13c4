"""The learner's side: every name the learner's process bound, written as data (``export``).

This runs in the learner's process, whose code may have replaced any of it: nothing here decides
what the judge binds (``judge.apply`` does, by its own rule).
"""

from __future__ import annotations

import base64
import json
import types

from tutor.sandbox.inner.describe import numpy_scalar
from tutor.sandbox.inner.exchange.rules import MAX_DEPTH, MAX_ITEMS, is_code, is_constant
from tutor.sandbox.wire import MAX_EXPORT  # bytes of JSON; past it, the largest values are left out


def export(namespace: dict, setup_ids: dict[str, int], torch, hooks=None) -> bytes:
    """Every public name ``namespace`` binds, as data; what setup bound and nobody replaced is marked so.

    Which of these the judge binds is not this side's to say (see :func:`apply`): this is the
    learner's process, whose code may have replaced this very function. ``hooks``: where this
    process stays to serve the judge's calls (``remote.Handles``), what is not data (the
    learner's functions, classes and objects) crosses as a handle instead of as opaque.
    """
    budget = [MAX_EXPORT]
    storages: dict[int, int] = {}  # storage data_ptr -> index in the table: views keep sharing memory
    table: list[str] = []
    ctx = (torch, budget, storages, table, hooks)
    if hooks is not None:
        hooks.namespace = namespace
    out = {}
    for name, value in list(namespace.items()):
        if name.startswith("__") or name == "raised":
            continue
        if setup_ids.get(name) == id(value) and (is_code(value) or is_constant(name, value, torch)):
            # the judge has the same function, class or module from its own setup, and keeps its
            # own constants whatever this says: no need to send them
            out[name] = {"k": "from_setup"}
            continue
        try:
            out[name] = _encode(value, ctx, 0)
            if out[name].get("k") == "remote" and not _learners_own(value):
                # a module, or a function or class the code imported: the judge uses its own, never
                # the learner's process's (whose torch.allclose may be patched)
                out[name] = {"k": "opaque", "what": "a module" if isinstance(value, types.ModuleType)
                             else "a function or class the code imported"}
        except _TooBig:
            out[name] = {"k": "opaque", "what": f"{type(value).__name__} too large to judge"}
        except Exception as exc:  # noqa: BLE001 - a value we cannot read is simply not exported
            out[name] = {"k": "opaque", "what": f"{type(value).__name__}: {str(exc)[:100]}"}
    raised = namespace.get("raised")
    if isinstance(raised, BaseException):
        out["raised"] = {"k": "exception", "class": type(raised).__name__, "message": str(raised)[:2000]}
    return json.dumps({"names": out, "storages": table}, allow_nan=False).encode()


def encode_doc(fields: dict, torch, hooks, value_keys: tuple[str, ...], state_keys: tuple[str, ...] = ()) -> bytes:
    """A message of proxied calls (``remote.py``): ``value_keys``' values as data (objects by handle),
    ``state_keys``' as data throughout (a model's state, not its handle), the rest as they are."""
    ctx = (torch, [MAX_EXPORT], {}, [], hooks)
    state = (*ctx[:4], None)
    try:
        out = {k: (_encode(v, ctx, 0) if k in value_keys else _encode(v, state, 0) if k in state_keys else v)
               for k, v in fields.items()}
    except _TooBig:
        raise ValueError("the value is too large to cross between the processes") from None
    out["storages"] = ctx[3]
    return json.dumps(out, allow_nan=False).encode()


def _learners_own(value) -> bool:
    """What a name may be bound to as a proxy: a function or class the learner's code defined, or an object."""
    if isinstance(value, types.ModuleType):
        return False
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)):
        return getattr(value, "__module__", None) == "__main__"
    return True


class _TooBig(Exception):
    pass


def _charge(budget: list[int], n: int) -> None:
    budget[0] -= n
    if budget[0] < 0:
        raise _TooBig


def _encode(v, ctx, depth: int):
    torch, budget, hooks = ctx[0], ctx[1], ctx[4]
    if depth > MAX_DEPTH:
        raise ValueError("nested too deeply")
    _charge(budget, 16)
    ref = hooks.ref(v) if hooks is not None else None
    if ref is not None:  # the judge passes back an object of the learner's: by its handle
        return ref
    if v is None:
        return {"k": "none"}
    plain = numpy_scalar(v)  # np.float64 is a float whose repr the judge cannot read back
    if plain is not None:
        v = plain
    if isinstance(v, bool):
        return {"k": "bool", "v": v}
    if isinstance(v, int):  # int() and float(): a subclass's str/repr is its own (an IntEnum's is its name)
        return {"k": "int", "v": str(int(v))}
    if isinstance(v, float):
        return {"k": "float", "v": repr(float(v))}
    if isinstance(v, str):
        _charge(budget, len(v))
        return {"k": "str", "v": v}
    if isinstance(v, bytes):
        _charge(budget, len(v) * 4 // 3)
        return {"k": "bytes", "v": base64.b64encode(v).decode()}
    if isinstance(v, torch.Size):
        return {"k": "size", "v": [int(d) for d in v]}
    if isinstance(v, torch.dtype):
        return {"k": "dtype", "v": str(v).removeprefix("torch.")}
    if isinstance(v, torch.device):
        return {"k": "device", "v": str(v)}
    if isinstance(v, torch.Tensor):
        return _encode_tensor(v, ctx, grad=True)
    if isinstance(v, torch.nn.Module):
        if hooks is not None and depth > 0:  # a model inside a call's result: used where it lives
            return hooks.handle(v, f"a {type(v).__name__}")
        state = {k: _encode(t, ctx, depth + 1) for k, t in v.state_dict(keep_vars=False).items()}
        out = {"k": "module", "class": type(v).__name__, "state": state,
               "training": [[n, m.training] for n, m in v.named_modules()],
               "requires_grad": [[n, p.requires_grad] for n, p in v.named_parameters()],
               "grads": [[n, _encode_tensor(p.grad, ctx)] for n, p in v.named_parameters()
                         if p.grad is not None]}
        if hooks is not None:  # the judge's setup may hold the same model (its state then) or not (this)
            out["h"] = hooks.handle(v, f"a {type(v).__name__}")["h"]
        return out
    if isinstance(v, torch.optim.Optimizer):
        out = {"k": "optimizer", "class": type(v).__name__, "state": _encode(v.state_dict(), ctx, depth + 1)}
        if hooks is not None:
            out["h"] = hooks.handle(v, f"a {type(v).__name__}")["h"]
        return out
    if isinstance(v, BaseException):
        return {"k": "exception", "class": type(v).__name__, "message": str(v)[:2000]}
    if isinstance(v, (list, tuple, set, frozenset)):
        items = list(v)
        if len(items) > MAX_ITEMS:
            raise ValueError("too many items")
        kind = {list: "list", tuple: "tuple", set: "set", frozenset: "frozenset"}.get(type(v))
        if kind is None:  # a subclass (a namedtuple, torch.return_types...): keep the items, not the type
            kind = "tuple" if isinstance(v, tuple) else "list"
        return {"k": kind, "v": [_encode(i, ctx, depth + 1) for i in items]}
    if isinstance(v, dict):
        if len(v) > MAX_ITEMS:
            raise ValueError("too many items")
        return {"k": "dict", "v": [[_encode(key, ctx, depth + 1), _encode(val, ctx, depth + 1)]
                                   for key, val in v.items()]}
    numpy = __import__("sys").modules.get("numpy")
    if numpy is not None and isinstance(v, numpy.ndarray) and v.dtype.kind in "biufc":
        return {"k": "ndarray", "tensor": _encode_tensor(torch.from_numpy(numpy.ascontiguousarray(v)), ctx),
                "dtype": str(v.dtype)}
    what = "a function or class" if callable(v) or isinstance(v, (type, types.ModuleType)) else type(v).__name__
    if hooks is not None:  # where the learner's process serves calls: the object stays there, used by handle
        return hooks.handle(v, _describe_object(v, what))
    return {"k": "opaque", "what": what}


def _describe_object(v, what: str) -> str:
    """How a message names a learner's object: ``band()``, ``class Value``, ``a Value``."""
    name = getattr(v, "__name__", None) if isinstance(v, (types.FunctionType, type)) else None
    if isinstance(name, str):
        return f"class {name}" if isinstance(v, type) else f"{name}()"
    return f"a {type(v).__name__}" if what != "a function or class" else what


def _encode_tensor(t, ctx, grad: bool = False):
    """A tensor as (storage, offset, shape, stride): views of one storage stay views of one storage."""
    torch, budget, storages, table = ctx[:4]
    if t is None:
        return {"k": "none"}
    if t.layout != torch.strided or t.is_quantized or t.device.type != "cpu" or t.is_conj() or t.is_neg():
        raise ValueError("only dense CPU tensors cross to the judge")
    storage = t.untyped_storage()
    key = storage.data_ptr() if storage.nbytes() else -1 - len(table)
    if key not in storages:
        raw = torch.empty(0, dtype=torch.uint8).set_(storage) if storage.nbytes() else torch.empty(0,
                                                                                                  dtype=torch.uint8)
        _charge(budget, raw.numel() * 4 // 3 + 64)
        storages[key] = len(table)
        table.append(base64.b64encode(raw.numpy().tobytes()).decode())
    out = {"k": "tensor", "dtype": str(t.dtype).removeprefix("torch."), "storage": storages[key],
           "offset": int(t.storage_offset()), "shape": list(t.shape), "stride": list(t.stride()),
           "requires_grad": bool(t.requires_grad), "version": int(t._version)}
    if grad and t.is_leaf and t.grad is not None:
        out["grad"] = _encode_tensor(t.grad, ctx)
    return out
