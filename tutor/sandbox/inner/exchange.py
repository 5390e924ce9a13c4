"""Values that cross from the learner's process to the judge's: plain data, never code.

A repair or a lab is judged in two confined processes (see ``runner.py``):

* the **learner's process** runs the drill's setup, the learner's code and the
  drill's ``probe``, then :func:`export` writes every name it bound as data;
* the **judge's process**, forked fresh from the zygote, runs the setup again,
  :func:`apply` binds the exported data over it, and only then runs the check.

Nothing the learner's code did can reach the judge except these values: the
learner controls what their code computes, never the code that judges it (a
patched ``torch.allclose``, a replaced ``_run``, a forged result line all stay
behind in the learner's process). The format is JSON with tensors as base64
bytes plus dtype and shape; decoding builds tensors with ``frombuffer`` after
checking every size, and never unpickles.

Standard library and torch only, like the rest of the inner sandbox.
"""

from __future__ import annotations

import base64
import builtins
import json
import math
import types

from tutor.sandbox.inner.describe import numpy_scalar
from tutor.sandbox.wire import MAX_EXPORT  # bytes of JSON; past it, the largest values are left out

MAX_DEPTH = 8
MAX_ITEMS = 4096


class Unjudgeable:
    """Stands in the judge for a value that could not leave the learner's process."""

    def __init__(self, name: str, what: str, why: str = ""):
        object.__setattr__(self, "_why", why or f"{name!r} ({what}) lives only in the learner's process: a "
                                                "repair's or a lab's check runs in a separate judge process that "
                                                "receives only data. Compute what the check needs from it in the "
                                                "drill's `probe:` (see lessons/README.md, \"Judged checks\")")

    def _refuse(self, *args, **kwargs):
        raise NameError(object.__getattribute__(self, "_why"))

    __getattr__ = __call__ = __iter__ = __len__ = __bool__ = __getitem__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __add__ = __sub__ = __mul__ = _refuse
    __hash__ = None  # type: ignore[assignment]


# ---------------------------------------------------------------- the learner's side


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
        if setup_ids.get(name) == id(value) and (_is_code(value) or _is_constant(name, value, torch)):
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


def _is_constant(name: str, value, torch) -> bool:
    """A check's constant: an UPPER_CASE name of three or more characters that is not a tensor or a model.

    (``T``, ``X`` or ``W`` are variables in math's spelling; ``CASES`` is a test table.)
    """
    return (len(name) >= 3 and name.isupper()
            and not isinstance(value, (torch.Tensor, torch.nn.Module, torch.optim.Optimizer)))


def _learners_own(value) -> bool:
    """What a name may be bound to as a proxy: a function or class the learner's code defined, or an object."""
    if isinstance(value, types.ModuleType):
        return False
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)):
        return getattr(value, "__module__", None) == "__main__"
    return True


def _is_code(value) -> bool:
    """Functions, classes and modules: what setup binds that the judge's own setup binds the same way.

    Everything else setup made (tensors, models, custom objects) may have been changed by
    the learner's code, so it is exported as data or, if it cannot be, made unjudgeable.
    """
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
                              types.ModuleType))


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


# ---------------------------------------------------------------- the judge's side


class BadExport(ValueError):
    """The learner's process sent something that is not an export: nothing of it is used."""


def apply(namespace: dict, raw: str, torch, binds=(), rebinds=(), hooks=None) -> None:
    """Bind the learner's exported values over the judge's own setup namespace, by the judge's rule.

    The learner's process wrote ``raw`` and may have forged it (its code can replace the
    exporter), so what it names decides nothing. The host read from the sources which names
    the drill computes (``binds``) and which setup constants its own code rebinds (``rebinds``);
    against what this process's own setup bound:

    * a setup constant (UPPER_CASE, not a tensor or a model) stays the judge's own, unless the
      drill's own code rebinds it;
    * a function, class or module setup bound stays the judge's own, unless the drill's own code
      rebinds it (``rebinds``: a repair whose code redefines setup's ``step``); the learner's code
      defining the same name is not enough, or a lab's grading helper could be replaced by one;
    * any other value setup bound (a tensor, a model, a list) is the learner's, as exported: the
      code may have changed it in place; one the export leaves out, or claims untouched, cannot be
      judged (the judge's fresh copy would pass for the learner's);
    * a name setup did not bind is bound only if it is in ``binds`` (else the export's value is
      ignored, a built-in's name or a dunder included); left out, it stays unbound;
    * ``raised``, the learner's exception, is bound when it is one.

    ``hooks``: where the learner's process serves calls (``remote.Channel``), its functions,
    classes and objects are bound as proxies whose uses run there; else they cannot be judged.
    """
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise BadExport(f"not JSON ({str(exc)[:80]})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("names"), dict):
        raise BadExport("not a mapping of names")
    ctx = (torch, read_storages(doc, torch), hooks)
    sent, binds, rebinds = doc["names"], frozenset(binds), frozenset(rebinds)
    setup = {name: value for name, value in namespace.items() if not name.startswith("__")}
    for name, value in setup.items():
        if _is_constant(name, value, torch) and name not in rebinds:
            continue  # the check's constants (its test cases): the learner's process cannot change them
        code = _is_code(value)
        if code and name not in rebinds:
            # the judge's own helper: only the drill's own sources may rebind it, never the learner's code
            # alone (a learner's `def check_models(...)` of the same name would otherwise grade itself)
            continue
        enc = sent.get(name)
        if isinstance(enc, dict) and enc.get("k") == "from_setup":
            if code or _is_constant(name, value, torch):
                continue  # "untouched": the judge's own is the same
            enc = None
        if enc is None:
            namespace[name] = Unjudgeable(name, "", f"{name[:60]!r}, which setup made, did not come back from "
                                                    "the learner's process (its code deleted it, or the results "
                                                    "were tampered with), so the check cannot read it")
            continue
        _bind(namespace, name, enc, ctx)
    for name in binds - setup.keys():
        if not name.startswith("__") and name != "raised" and sent.get(name) is not None:
            _bind(namespace, name, sent[name], ctx)
    raised = sent.get("raised")
    namespace["raised"] = _decode(raised, ctx, 0) if isinstance(raised, dict) and raised.get("k") == "exception" \
        else None


def read_storages(doc: dict, torch) -> list:
    """The storages a message's tensors index into (each a fresh byte tensor: never the sender's memory)."""
    if not isinstance(doc.get("storages"), list):
        raise BadExport("no storage table")
    storages = []
    for item in doc["storages"]:
        if not isinstance(item, str):
            raise BadExport("malformed storage")
        storages.append(torch.frombuffer(bytearray(base64.b64decode(item, validate=True)), dtype=torch.uint8)
                        if item else torch.empty(0, dtype=torch.uint8))
    return storages


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


def decode(enc, ctx):
    """One value of a message (``ctx``: torch, its storages, the hooks)."""
    return _decode(enc, ctx, 0)


def _bind(namespace: dict, name: str, enc, ctx) -> None:
    """One exported value into the judge's namespace (a module's or an optimizer's into setup's own copy)."""
    if not isinstance(enc, dict):
        raise BadExport("malformed entry")
    kind = enc.get("k")
    if kind in ("module", "optimizer") and ctx[2] is not None and "h" in enc and not isinstance(
            namespace.get(name), ctx[0].nn.Module if kind == "module" else ctx[0].optim.Optimizer):
        namespace[name] = ctx[2].remote(enc)  # built by the learner's code: used where it lives
    elif kind in ("module", "optimizer"):
        namespace[name] = apply_state(namespace.get(name), name, enc, ctx)
        if ctx[2] is not None and not isinstance(namespace[name], Unjudgeable):
            ctx[2].bound(name, namespace[name])  # passed to the learner's code, it names the learner's own
    elif kind in ("opaque", "from_setup"):  # a name setup did not bind cannot be setup's
        namespace[name] = Unjudgeable(name, str(enc.get("what", "an object"))[:200])
    else:
        try:
            namespace[name] = _decode(enc, ctx, 0)
        except (BadExport, ValueError, TypeError, OverflowError, RecursionError) as exc:
            # nothing of it is used (a hostile export may fail anywhere); the message names the value
            raise BadExport(f"the value of {name[:60]!r}: {str(exc)[:160]}") from None


def apply_state(target, name: str, enc: dict, ctx):
    """A model's or an optimizer's exported state, loaded into the judge's own ``target`` (or Unjudgeable)."""
    if enc.get("k") == "module":
        return _apply_module(target, name, enc, ctx)
    return _apply_optimizer(target, name, enc, ctx)


def _apply_module(target, name: str, enc: dict, ctx):
    torch = ctx[0]
    if not isinstance(target, torch.nn.Module) or type(target).__name__ != enc.get("class"):
        return Unjudgeable(name, f"a {str(enc.get('class'))[:60]} built by the learner's code")
    state = enc.get("state")
    if not isinstance(state, dict):
        raise BadExport("module state")
    try:
        with torch.no_grad():
            target.load_state_dict({str(k): _decode(v, ctx, 1) for k, v in state.items()}, strict=True)
    except (RuntimeError, TypeError, ValueError) as exc:  # the learner's code changed the module's structure
        return Unjudgeable(name, f"a {type(target).__name__} whose structure the learner's code changed "
                                 f"({str(exc).splitlines()[0][:120]})")
    modules = dict(target.named_modules())
    for sub, flag in _pairs(enc.get("training")):
        if sub in modules and isinstance(flag, bool):
            modules[sub].training = flag
    params = dict(target.named_parameters())
    for pname, flag in _pairs(enc.get("requires_grad")):
        if pname in params and isinstance(flag, bool):
            params[pname].requires_grad_(flag)
    for pname, g in _pairs(enc.get("grads")):
        if pname in params:
            params[pname].grad = _decode(g, ctx, 1)
    return target


def _apply_optimizer(target, name: str, enc: dict, ctx):
    torch = ctx[0]
    if not isinstance(target, torch.optim.Optimizer) or type(target).__name__ != enc.get("class"):
        return Unjudgeable(name, f"a {str(enc.get('class'))[:60]} built by the learner's code")
    try:
        target.load_state_dict(_decode(enc.get("state"), ctx, 1))
    except (RuntimeError, TypeError, ValueError, KeyError) as exc:
        return Unjudgeable(name, f"a {type(target).__name__} the learner's code changed ({str(exc)[:120]})")
    return target


def _pairs(v) -> list:
    if not isinstance(v, list):
        return []
    return [p for p in v if isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)]


_DTYPES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
           "complex64", "complex128", "uint16", "uint32", "uint64")


def _decode(enc, ctx, depth: int):
    torch = ctx[0]
    if not isinstance(enc, dict) or depth > MAX_DEPTH + 2:
        raise BadExport("malformed value")
    kind = enc.get("k")
    v = enc.get("v")
    if kind == "none":
        return None
    if kind == "bool" and isinstance(v, bool):
        return v
    if kind == "int" and isinstance(v, str) and len(v) < 5000:
        return int(v)
    if kind == "float" and isinstance(v, str):
        if v in ("nan", "inf", "-inf"):
            return {"nan": math.nan, "inf": math.inf}.get(v, -math.inf)
        try:
            return float(v)
        except ValueError:
            raise BadExport(f"{v[:40]!r} is not a number") from None
    if kind == "str" and isinstance(v, str):
        return v
    if kind == "bytes" and isinstance(v, str):
        return base64.b64decode(v, validate=True)
    if kind == "size" and isinstance(v, list) and all(isinstance(d, int) for d in v):
        return torch.Size(v)
    if kind == "dtype" and v in _DTYPES:
        return getattr(torch, v)
    if kind == "device" and isinstance(v, str):
        return torch.device(v)
    if kind == "tensor":
        return _decode_tensor(enc, ctx, depth)
    if kind == "ndarray":
        return _decode_tensor(enc.get("tensor"), ctx, depth).numpy()
    if kind == "exception":
        return _exception(str(enc.get("class", "Exception"))[:100], str(enc.get("message", ""))[:2000], torch)
    if kind in ("list", "tuple", "set", "frozenset") and isinstance(v, list):
        items = [_decode(i, ctx, depth + 1) for i in v]
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[kind](items)
    if kind == "dict" and isinstance(v, list):
        out = {}
        for pair in v:
            if not isinstance(pair, list) or len(pair) != 2:
                raise BadExport("malformed dict item")
            out[_decode(pair[0], ctx, depth + 1)] = _decode(pair[1], ctx, depth + 1)
        return out
    if kind == "opaque":
        return Unjudgeable("a value", str(enc.get("what", "an object"))[:200])
    hooks = ctx[2]
    if kind in ("remote", "module", "optimizer") and hooks is not None and "h" in enc:
        return hooks.remote(enc)
    if kind == "remote":
        return Unjudgeable("a value", str(enc.get("what", "an object"))[:200])
    if kind == "handle" and hooks is not None:
        return hooks.lookup(enc.get("h"))
    if kind == "named" and hooks is not None:
        return hooks.lookup_name(enc.get("name"))
    raise BadExport(f"unknown value kind {str(kind)[:40]!r}")



def _decode_tensor(enc, ctx, depth: int):
    torch, storages = ctx[0], ctx[1]
    if not isinstance(enc, dict):
        raise BadExport("malformed tensor")
    dtype, shape, stride = enc.get("dtype"), enc.get("shape"), enc.get("stride")
    index, offset = enc.get("storage"), enc.get("offset")
    ints = lambda v: isinstance(v, list) and len(v) <= 64 and all(isinstance(d, int) and d >= 0 for d in v)
    if dtype not in _DTYPES or not ints(shape) or not ints(stride) or len(shape) != len(stride):
        raise BadExport("malformed tensor")
    if not isinstance(index, int) or not 0 <= index < len(storages) or not isinstance(offset, int) or offset < 0:
        raise BadExport("malformed tensor storage")
    dt = getattr(torch, dtype)
    item = torch.empty((), dtype=dt).element_size()
    buffer = storages[index]
    # the furthest element any index reaches must lie inside the storage (else set_ would read out of it)
    last = offset + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else offset - 1
    if (last + 1) * item > buffer.numel():
        raise BadExport("a tensor reaches past its storage")
    t = torch.empty(0, dtype=dt).set_(buffer.untyped_storage(), offset, shape, stride)
    version = enc.get("version")
    if isinstance(version, int) and 0 <= version < 1 << 40:  # what in-place writes the learner's code made
        torch._C._autograd._unsafe_set_version_counter((t,), (version,))
    if enc.get("requires_grad") is True and (t.is_floating_point() or t.is_complex()):
        t.requires_grad_(True)
    if "grad" in enc:
        t.grad = _decode(enc["grad"], ctx, depth + 1)
    return t


def _exception(name: str, message: str, torch) -> BaseException:
    """The learner's exception, as the same class where it is a built-in or torch's, else a look-alike."""
    cls = getattr(builtins, name, None) or getattr(torch, name, None) or getattr(getattr(torch, "linalg", None),
                                                                                 name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        cls = type(name, (Exception,), {})
    try:
        return cls(message)
    except Exception:  # noqa: BLE001 - a class that wants other arguments
        return type(name, (Exception,), {})(message)


learner_exception = _exception
