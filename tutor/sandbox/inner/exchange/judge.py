"""The judge's side: the learner's exported data bound over the judge's own setup (``apply``).

The learner's process wrote what arrives here and may have forged it: every size is checked,
tensors are built with ``frombuffer`` in fresh memory, nothing is unpickled, and what the export
names decides nothing about which names are bound.
"""

from __future__ import annotations

import base64
import builtins
import json
import math

from tutor.sandbox.inner.exchange.rules import MAX_DEPTH, is_code, is_constant


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
        if is_constant(name, value, torch) and name not in rebinds:
            continue  # the check's constants (its test cases): the learner's process cannot change them
        code = is_code(value)
        if code and name not in rebinds:
            # the judge's own helper: only the drill's own sources may rebind it, never the learner's code
            # alone (a learner's `def check_models(...)` of the same name would otherwise grade itself)
            continue
        enc = sent.get(name)
        if isinstance(enc, dict) and enc.get("k") == "from_setup":
            if code or is_constant(name, value, torch):
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
