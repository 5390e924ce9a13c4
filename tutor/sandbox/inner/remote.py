"""Proxied calls: a judged check may call the learner's functions and use the learner's objects.

Checks written before the judge existed call the learner's code directly
(``check: assert band(x) == ...``). The judge's process never runs that code: the learner's
process stays after its export and serves calls over a pipe pair (fds 7 and 8, ``tree.py``),
and the judge's process binds each function, class or object the learner's code built as a
:class:`Remote` whose every use is one round trip:

    judge: band(x)  --call(handle 3, args as data)-->  learner: band(x) runs here
           <-- the result as data (``exchange``), or a new handle for an object

Arguments and results cross as ``exchange`` data (tensors, numbers, containers), never as
code; a learner's object stays in its process and crosses as a handle. The check and its
verdict stay in the judge: what comes back is only what the learner's code computed, which
the learner controls anyway. A tensor argument the call changed in place comes back and is
copied into the judge's own (``fill_(x)`` checks keep working). Each call waits at most until
the judge's own limit; a learner's process that is gone (its limit, a crash) makes the call
raise, with the name of what was called.

Standard library and torch only, like the rest of the inner sandbox.
"""

from __future__ import annotations

import json
import os
import select
import time

from tutor.sandbox.inner import exchange
from tutor.sandbox.inner.tree import CHANNEL_IN_FD, CHANNEL_OUT_FD
from tutor.sandbox.wire import MAX_EXPORT

MAX_FRAME = MAX_EXPORT + (1 << 20)  # one message: a value's data and the call around it
MAX_HANDLES = 100_000  # objects one judge may make the learner's process keep


class LearnerGone(RuntimeError):
    """The learner's process ended, so what the check called cannot answer."""


# ---------------------------------------------------------------- frames (both sides)


def _write_frame(fd: int, payload: bytes, deadline: float | None = None) -> None:
    """One frame; past ``deadline`` (judge side: a learner's process that stopped reading), TimeoutError."""
    view, offset = memoryview(len(payload).to_bytes(8, "little") + payload), 0
    while offset < len(view):
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                raise TimeoutError
        offset += os.write(fd, view[offset:offset + 65536])  # at most a pipe's buffer: never blocks long


def _read_exactly(fd: int, n: int, deadline: float | None) -> bytes | None:
    """``n`` bytes from ``fd``; None at end of file. Past ``deadline`` (judge side), TimeoutError."""
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _read_frame(fd: int, deadline: float | None = None) -> bytes | None:
    head = _read_exactly(fd, 8, deadline)
    if head is None:
        return None
    size = int.from_bytes(head, "little")
    if size > MAX_FRAME:
        return None  # not a frame this protocol writes: treated as the other side gone
    return _read_exactly(fd, size, deadline)


# ---------------------------------------------------------------- the learner's side


class Handles:
    """The learner's objects the judge holds handles to (``exchange`` hooks, learner side)."""

    def __init__(self):
        self.objects: list = []
        self.namespace: dict = {}  # the learner's names (``exchange.export`` sets it)

    def ref(self, value):  # only the judge's side sends handles of its own
        return None

    def lookup_name(self, name):
        """A model or an optimizer setup made, which the judge passes by name: this process's own."""
        value = self.namespace.get(name) if isinstance(name, str) else None
        if value is None:
            raise exchange.BadExport(f"no model or optimizer named {str(name)[:60]!r} here")
        return value

    def bound(self, name: str, value) -> None:
        pass

    def handle(self, value, what: str) -> dict:
        if len(self.objects) >= MAX_HANDLES:
            return {"k": "opaque", "what": what}
        self.objects.append(value)
        return {"k": "remote", "h": len(self.objects) - 1, "what": what[:200]}

    def lookup(self, h):
        if not isinstance(h, int) or not 0 <= h < len(self.objects):
            raise exchange.BadExport("no such object")
        return self.objects[h]

    def remote(self, enc: dict):
        raise exchange.BadExport("the learner's side is sent its own objects as handles, not as remotes")


def serve(handles: Handles, torch) -> None:
    """Answer the judge's calls until it closes the channel; then leave (never returns)."""
    while True:
        try:
            raw = _read_frame(CHANNEL_IN_FD)
        except OSError:
            raw = None
        if raw is None:
            os._exit(0)
        try:
            reply = _answer(raw, handles, torch)
        except BaseException as exc:  # noqa: BLE001 - a reply that cannot be made is an error, not silence
            reply = json.dumps({"error": f"{type(exc).__name__}: {str(exc)[:300]}"}).encode()
        try:
            _write_frame(CHANNEL_OUT_FD, reply)
        except OSError:
            os._exit(0)


_OPS = ("call", "getattr", "setattr", "getitem", "setitem", "contains", "binary")
_OPERATORS = ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "rfloordiv",
              "matmul", "rmatmul", "pow", "rpow", "mod", "eq", "ne", "lt", "le", "gt", "ge")
_UNARY = {"len": len, "bool": bool, "repr": repr, "str": str, "iter": list, "int": int, "float": float,
          "index": lambda v: v.__index__(), "neg": lambda v: -v}


def _answer(raw: bytes, handles: Handles, torch) -> bytes:
    doc = json.loads(raw)
    storages = exchange.read_storages(doc, torch)
    dctx = (torch, storages, handles)
    target = handles.lookup(doc.get("h"))
    op = doc.get("op")
    args, kwargs = exchange.decode(doc.get("args"), dctx), exchange.decode(doc.get("kwargs"), dctx)
    if not isinstance(args, list) or not isinstance(kwargs, list):
        raise exchange.BadExport("malformed call")
    kwargs = {str(pair[0]): pair[1] for pair in kwargs if isinstance(pair, list) and len(pair) == 2}
    name = str(doc.get("name", ""))
    if op not in _OPS and op not in _UNARY:
        raise exchange.BadExport(f"unknown call {str(op)[:40]!r}")
    if op == "binary" and not (name[2:-2] in _OPERATORS and name == f"__{name[2:-2]}__"):
        raise exchange.BadExport("not an operator")  # a message names an operator, never any method
    versions = [(i, a, a._version) for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
    named = [n for n in doc.get("named", []) if isinstance(n, str)][:64]
    try:
        if op == "call":
            value = target(*args, **kwargs)
        elif op == "getattr":
            value = getattr(target, str(args[0]))
        elif op == "setattr":
            value = setattr(target, str(args[0]), args[1])
        elif op == "getitem":
            value = target[args[0]]
        elif op == "setitem":
            target[args[0]] = args[1]
            value = None
        elif op == "contains":
            value = args[0] in target
        elif op == "binary":  # an operator's method by name, as Python looked it up on the judge's side
            method = getattr(target, name, None)
            value = NotImplemented if method is None else method(*args)
        else:
            value = _UNARY[op](target)
    except Exception as exc:  # noqa: BLE001 - the learner's code raised: the judge raises it in the check
        return json.dumps({"raised": {"class": type(exc).__name__, "message": str(exc)[:2000]}}).encode()
    if value is NotImplemented:
        return json.dumps({"not_implemented": True}).encode()
    changed = [[i, a] for i, a, before in versions if a._version != before]
    synced = [[n, handles.namespace.get(n)] for n in named]  # what the call did to them, sent back
    return exchange.encode_doc({"value": value, "changed": changed, "synced": synced}, torch, handles,
                               ("value", "changed"), ("synced",))


# ---------------------------------------------------------------- the judge's side


class Channel:
    """The judge's end: one round trip per use of a :class:`Remote` (``exchange`` hooks, judge side)."""

    def __init__(self, torch, deadline: float):
        self.torch = torch
        self.deadline = deadline  # the judge's own limit: a call never outlives it
        self.gone = ""
        self.named: dict[int, tuple[str, object]] = {}  # id -> (name, the judge's copy) of setup's models
        self.passed: list[str] = []  # of those, the ones the message being encoded passes

    def bound(self, name: str, value) -> None:
        self.named[id(value)] = (name, value)

    def ref(self, value):
        if type(value) is Remote:
            return {"k": "handle", "h": object.__getattribute__(value, "_h")}
        named = self.named.get(id(value))
        if named is not None and named[1] is value:  # setup's model: the learner's process has its own
            self.passed.append(named[0])
            return {"k": "named", "name": named[0]}
        return None

    def handle(self, value, what: str) -> dict:  # the judge's own functions and objects stay here
        raise ValueError(f"{what} cannot be sent to the learner's code: a check passes it data")

    def remote(self, enc: dict):
        h = enc.get("h")
        if not isinstance(h, int) or h < 0:
            raise exchange.BadExport("malformed handle")
        return Remote(self, h, str(enc.get("what", "an object"))[:200])

    def lookup(self, h):
        raise exchange.BadExport("the judge is never sent its own objects")

    def request(self, what: str, op: str, h: int, args=(), kwargs=None, name: str = ""):
        if self.gone:
            raise LearnerGone(self.gone)
        torch = self.torch
        self.passed = []
        # "named" last: encoding the arguments fills it (``ref``), and a dict keeps its order
        payload = exchange.encode_doc({"op": op, "h": h, "name": name, "args": list(args),
                                       "kwargs": [[k, v] for k, v in (kwargs or {}).items()],
                                       "named": self.passed}, torch, self, value_keys=("args", "kwargs"))
        try:
            _write_frame(CHANNEL_OUT_FD, payload, self.deadline)
            raw = _read_frame(CHANNEL_IN_FD, self.deadline)
        except TimeoutError:
            self.gone = (f"{what} did not return within the check's time limit (an endless loop in the "
                         "learner's code?)")
            raise TimeoutError(self.gone) from None
        except OSError:
            raw = None
        if raw is None:
            self.gone = (f"the learner's process ended while {what} ran (it went past its time or memory "
                         "limit, or its code ended the process), so the check could not finish")
            raise LearnerGone(self.gone)
        doc = json.loads(raw)
        if not isinstance(doc, dict):
            raise exchange.BadExport("malformed reply")
        if "error" in doc:
            raise exchange.BadExport(f"{what}: {str(doc['error'])[:300]}")
        raised = doc.get("raised")
        if isinstance(raised, dict):
            raise exchange.learner_exception(str(raised.get("class", "Exception"))[:100],
                                             str(raised.get("message", ""))[:2000], torch)
        if doc.get("not_implemented") is True:
            return NotImplemented
        dctx = (torch, exchange.read_storages(doc, torch), self)
        value, changed = exchange.decode(doc.get("value"), dctx), exchange.decode(doc.get("changed"), dctx)
        for pair in changed if isinstance(changed, list) else []:
            if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int) and 0 <= pair[0] < len(args):
                _write_back(args[pair[0]], pair[1], torch)
        self._sync(doc.get("synced"), dctx)
        return value

    def _sync(self, synced, dctx) -> None:
        """Setup's models and optimizers a call was passed: their state after it, into the judge's copies."""
        mine = {name: value for name, value in self.named.values()}
        # sent as a list of [name, state] pairs, each state left encoded: ``apply_state`` reads it
        pairs = synced.get("v") if isinstance(synced, dict) and synced.get("k") == "list" else None
        for pair in pairs if isinstance(pairs, list) else []:
            items = pair.get("v") if isinstance(pair, dict) and pair.get("k") == "list" else None
            if isinstance(items, list) and len(items) == 2 and isinstance(items[1], dict):
                name = exchange.decode(items[0], dctx)
                if isinstance(name, str) and name in mine and items[1].get("k") in ("module", "optimizer"):
                    exchange.apply_state(mine[name], name, items[1], dctx)


def _write_back(mine, theirs, torch) -> None:
    """A tensor argument the learner's code changed in place: the same change in the judge's own tensor."""
    if isinstance(mine, torch.Tensor) and isinstance(theirs, torch.Tensor) and mine.shape == theirs.shape \
            and mine.dtype == theirs.dtype:
        with torch.no_grad():
            mine.copy_(theirs)


class Remote:
    """A function, class or object that lives in the learner's process; each use is a call there."""

    __slots__ = ("_channel", "_h", "_what")

    def __init__(self, channel: Channel, h: int, what: str):
        object.__setattr__(self, "_channel", channel)
        object.__setattr__(self, "_h", h)
        object.__setattr__(self, "_what", what)

    def _ask(self, op: str, *args, kwargs=None, name: str = ""):
        me = object.__getattribute__
        return me(self, "_channel").request(me(self, "_what"), op, me(self, "_h"), args, kwargs, name)

    def __call__(self, *args, **kwargs):
        return self._ask("call", *args, kwargs=kwargs)

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # Python's own probes (copy, pickle, numpy) stay here
        return self._ask("getattr", name)

    def __setattr__(self, name: str, value) -> None:
        self._ask("setattr", name, value)

    def __getitem__(self, key):
        return self._ask("getitem", key)

    def __setitem__(self, key, value) -> None:
        self._ask("setitem", key, value)

    def __contains__(self, item) -> bool:
        return bool(self._ask("contains", item))

    def __len__(self) -> int:
        return self._ask("len")

    def __bool__(self) -> bool:
        return self._ask("bool")

    def __iter__(self):
        return iter(self._ask("iter"))

    def __int__(self) -> int:
        return self._ask("int")

    def __float__(self) -> float:
        return self._ask("float")

    def __index__(self) -> int:
        return self._ask("index")

    def __neg__(self):
        return self._ask("neg")

    def __repr__(self) -> str:
        try:
            return str(self._ask("repr"))
        except Exception:  # noqa: BLE001 - a message about a remote must still print
            return f"<{object.__getattribute__(self, '_what')} in the learner's process>"

    def __str__(self) -> str:
        return str(self._ask("str"))

    def __hash__(self) -> int:
        return hash(("remote", object.__getattribute__(self, "_h")))


def _operator(name: str):
    def method(self, other):
        return self._ask("binary", other, name=name)
    method.__name__ = name
    return method


for _name in _OPERATORS:
    setattr(Remote, f"__{_name}__", _operator(f"__{_name}__"))
