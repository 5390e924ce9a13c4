"""The sandbox's child side: runs one snippet and describes what it saw.

Imported by the zygote (``zygote.py``), which calls :func:`run_request` in a
confined child per snippet; it can also still run on its own as a script
(``python -I child.py``, a request on stdin), which is what the benchmark's
"cold" path measures. Either way it imports nothing from the ``tutor`` package,
so no tutor state (answer keys, the learner's profile) ever exists in a process
that runs untrusted code, and it is, with the zygote, the only torch importer.

Script protocol: a JSON run request on stdin; ``READY`` then one JSON result line
on the original stdout; the snippet's own stdout and stderr share the stderr pipe.
"""

from __future__ import annotations

import builtins
import json
import math
import os
import sys
import time
import warnings

import exchange
import labkit

PROTOCOL = 1
MAX_VARIABLES = 50
MAX_ITEMS = 64
MAX_VALUES = 64
MAX_TEXT = 2000
MAX_RESULT = 900_000
NETWORK_REFUSED = "network sockets are refused in the sandbox (course fence rule)"


def _die_with_parent() -> None:
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _refuse_network() -> None:
    import socket

    allowed = {getattr(socket, "AF_UNIX", None)}

    def hook(event: str, args: tuple) -> None:
        if event == "socket.__new__":
            family = args[1] if len(args) > 1 else None
            if family not in allowed and family != -1:
                raise PermissionError(NETWORK_REFUSED)
        elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr", "socket.connect",
                       "socket.sendto", "socket.bind"):
            target = args[1] if len(args) > 1 else None
            if not (isinstance(target, (str, bytes)) and event in ("socket.connect", "socket.bind")):
                raise PermissionError(NETWORK_REFUSED)

    sys.addaudithook(hook)


def _limit_resources(timeout: float) -> None:
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu_now = int(used.ru_utime + used.ru_stime)
    cpu_limit = cpu_now + int(math.ceil(timeout)) * (os.cpu_count() or 1) + 2
    limits = {
        resource.RLIMIT_CPU: (cpu_limit, cpu_limit + 1),
        resource.RLIMIT_AS: (6 << 30, 6 << 30),
        resource.RLIMIT_FSIZE: (64 << 20, 64 << 20),
        resource.RLIMIT_CORE: (0, 0),
        resource.RLIMIT_NOFILE: (512, 512),
    }
    for what, (soft, hard) in limits.items():
        try:
            current_soft, current_hard = resource.getrlimit(what)
            if current_hard != resource.RLIM_INFINITY:
                hard = min(hard, current_hard)
                soft = min(soft, hard)
            resource.setrlimit(what, (soft, hard))
        except (ValueError, OSError):
            pass


# ---------------------------------------------------------------- describing values


def _float(v: float):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _plain_values(v):
    if isinstance(v, list):
        return [_plain_values(i) for i in v]
    if isinstance(v, bool) or isinstance(v, int):
        return v
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, complex):
        return str(v)
    return str(v)


def describe(value, torch, depth: int = 0) -> dict:
    """A JSON-safe description of ``value``; reads attributes, never calls user ``__repr__``."""
    if depth > 6:
        return {"type": "object", "class": type(value).__name__}
    if value is None:
        return {"type": "none"}
    if isinstance(value, bool):
        return {"type": "bool", "value": value}
    if isinstance(value, int):
        return {"type": "int", "value": value} if abs(value) < 2**63 else {"type": "str", "value": str(value)}
    if isinstance(value, float):
        return {"type": "float", "value": _float(value)}
    if isinstance(value, str):
        return {"type": "str", "value": value[:MAX_TEXT]}
    if torch is not None:
        if isinstance(value, torch.Size):
            return {"type": "size", "items": [{"type": "int", "value": int(d)} for d in value]}
        if isinstance(value, torch.Tensor):
            return _describe_tensor(value, torch, depth)
        if isinstance(value, torch.dtype):
            return {"type": "dtype", "value": str(value)}
        if isinstance(value, torch.device):
            return {"type": "device", "value": str(value)}
        if isinstance(value, torch.nn.Module):
            return {"type": "module", "class": type(value).__name__}
    if isinstance(value, BaseException):
        # torch exposes some exceptions under a public name for a private class
        # (torch.linalg.LinAlgError is torch._C._LinAlgError): show the name people type.
        name = type(value).__name__.lstrip("_") or type(value).__name__
        return {"type": "exception", "name": name, "message": str(value)[:MAX_TEXT]}
    if isinstance(value, (tuple, list)):
        kind = "tuple" if isinstance(value, tuple) else "list"
        out = {"type": kind, "items": [describe(v, torch, depth + 1) for v in list(value)[:MAX_ITEMS]]}
        if len(value) > MAX_ITEMS:
            out["truncated"] = len(value)
        return out
    if isinstance(value, dict):
        items = list(value.items())[:MAX_ITEMS]
        return {"type": "dict", "items": [[str(k)[:200], describe(v, torch, depth + 1)] for k, v in items]}
    if isinstance(value, (set, frozenset)):
        items = sorted(value, key=lambda v: (type(v).__name__, str(v)))[:MAX_ITEMS]
        return {"type": "set", "items": [describe(v, torch, depth + 1) for v in items]}
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        if isinstance(value, numpy.generic):
            return describe(value.item(), torch, depth + 1)
        if isinstance(value, numpy.ndarray):
            out = {"type": "tensor", "shape": list(value.shape), "dtype": f"numpy.{value.dtype}",
                   "device": "cpu", "numel": int(value.size), "requires_grad": False, "is_leaf": True,
                   "grad_fn": None, "layout": "numpy",
                   "stride": [s // value.itemsize for s in value.strides] if value.itemsize else [],
                   "is_contiguous": bool(value.flags["C_CONTIGUOUS"])}
            if value.size <= MAX_VALUES and value.dtype.kind in "biuf":
                out["values"] = _plain_values(value.tolist())
            return out
    if callable(value):
        return {"type": "function", "class": type(value).__name__}
    return {"type": "object", "class": type(value).__name__}


def _describe_tensor(t, torch, depth: int) -> dict:
    out = {
        "type": "tensor",
        "shape": list(t.shape),
        "dtype": str(t.dtype),
        "device": str(t.device),
        "layout": str(t.layout),
        "requires_grad": bool(t.requires_grad),
        "is_leaf": bool(t.is_leaf),
        "grad_fn": type(t.grad_fn).__name__ if t.grad_fn is not None else None,
        "numel": int(t.numel()),
    }
    try:
        out["version"] = int(t._version)
    except (RuntimeError, AttributeError):
        pass
    if t.layout == torch.strided:
        out["stride"] = list(t.stride())
        out["is_contiguous"] = bool(t.is_contiguous())
        out["storage_offset"] = int(t.storage_offset())
        out["is_view"] = t._base is not None
    if t.numel() <= MAX_VALUES and t.device.type == "cpu" and t.layout == torch.strided and not t.is_quantized:
        try:
            out["values"] = _plain_values(t.detach().resolve_conj().resolve_neg().tolist())
        except (RuntimeError, TypeError):
            pass
    if depth == 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grad = t.grad if t.is_leaf or t.retains_grad else None
        if grad is not None:
            out["grad"] = _describe_tensor(grad, torch, depth + 1)
    return out


def _storage_key(t) -> int | None:
    try:
        storage = t.untyped_storage()
        return storage.data_ptr() if storage.nbytes() else None
    except (RuntimeError, NotImplementedError, TypeError):
        return None


def describe_variables(namespace: dict, torch) -> dict:
    import types

    chosen = {}
    for name, value in namespace.items():
        if name.startswith("_") or name == "raised" or isinstance(value, (types.ModuleType, type)):
            continue
        if callable(value) and not (torch is not None and isinstance(value, (torch.nn.Module, torch.Tensor))):
            continue
        chosen[name] = value
        if len(chosen) >= MAX_VARIABLES:
            break
    out = {name: describe(value, torch) for name, value in chosen.items()}
    if torch is not None:
        by_storage: dict[int, list[str]] = {}
        for name, value in chosen.items():
            if isinstance(value, torch.Tensor) and (key := _storage_key(value)) is not None:
                by_storage.setdefault(key, []).append(name)
        for names in by_storage.values():
            for name in names:
                out[name]["shares_storage_with"] = [n for n in names if n != name]
    return out


# ---------------------------------------------------------------- running


def _error_info(exc: BaseException, phase: str, filename: str) -> dict:
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None and isinstance(exc, SyntaxError) and exc.filename == filename:
        line = exc.lineno
    return {"phase": phase, "type": type(exc).__name__, "message": str(exc)[:MAX_TEXT], "line": line}


def _run(source: str, filename: str, namespace: dict, phase: str):
    if not source.strip():
        return None, None
    try:
        exec(compile(source, filename, "exec"), namespace)
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt are snippet errors too
        return exc, _error_info(exc, phase, filename)
    return None, None


def _fence_state(torch) -> dict:
    return {
        "default dtype": str(torch.get_default_dtype()),
        "thread count": torch.get_num_threads(),
        "grad mode": torch.is_grad_enabled(),
        "deterministic algorithms": (torch.are_deterministic_algorithms_enabled(),
                                     torch.is_deterministic_algorithms_warn_only_enabled()),
        "quantized engine": str(torch.backends.quantized.engine),
    }


def run_request(request: dict, torch) -> dict:
    """Run one request. Three shapes (see ``exchange.py`` for why the last two exist):

    * an ordinary run: setup, code, probe, asks, check, all here;
    * the learner's half of a judged run (``export``): no check; every name the code
      and the probe bound goes back as data;
    * the judge's half (``imports``): setup, the learner's data bound over it, the check.
    """
    import random

    baseline = _fence_state(torch)
    torch.manual_seed(0)
    random.seed(0)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(0)

    namespace: dict = {"__name__": "__main__", "__builtins__": builtins}
    # a course's helpers (and a lab's files, earlier stages): this process's own copy, served from text
    labkit.install_modules(dict(request.get("modules") or ()))
    started = time.perf_counter()
    raised, error = _run(request.get("setup", ""), "<setup>", namespace, "setup")
    # what setup bound, by identity: the learner's half of a judged run tells the judge which names it kept
    setup_ids = {name: id(value) for name, value in namespace.items()} if request.get("export") else {}
    imports = request.get("imports")
    if error is None and imports:
        try:
            exchange.apply(namespace, imports, torch)
            raised = namespace.pop("raised", None)
        except Exception as exc:  # noqa: BLE001 - hostile or unreadable data from the learner's process
            raised, error = exc, {"phase": "judge", "type": type(exc).__name__,
                                  "message": f"the learner's results could not be read: {str(exc)[:300]}",
                                  "line": None}
    elif error is None:
        raised, error = _run(request["code"], "<snippet>", namespace, "code")
        if error is None and request.get("probe", "").strip():
            raised, error = _run(request["probe"], "<probe>", namespace, "probe")
    tests = list(request.get("tests") or ())
    probe_errors = {}
    if tests and not imports and error is None:  # a lab's learner half: each test's probe on its own
        probe_errors = labkit.run_probes(tests, namespace, _run)

    asks = {}
    for ask in request.get("asks", []):
        asks[ask["key"]] = _observe(ask, namespace, raised, error, torch)

    check, check_message = "skipped", ""
    if request.get("check", "").strip() and (error is None or error["phase"] == "code"):
        namespace["raised"] = raised
        exc, info = _run(request["check"], "<check>", namespace, "check")
        if exc is None:
            check = "passed"
        elif isinstance(exc, AssertionError):
            check, check_message = "failed", f"line {info['line']}: {exc}" if str(exc) else f"line {info['line']}"
        else:
            check, check_message = "error", f"{info['type']}: {info['message']}"
    test_results, fingerprint = [], ""
    if imports and (tests or request.get("rules")):  # a lab's judge half: rules, then each test's check
        sources = dict(request.get("sources") or ())
        fingerprint = labkit.fingerprint(next(iter(sources.values()), ""))
        if error is None or error["phase"] != "judge":
            namespace["learner_source"] = dict(sources)  # what a grader may read of the learner's files
            if request.get("rules"):
                test_results.append(labkit.check_rules(request["rules"], sources))
            test_results.extend(labkit.run_tests(tests, namespace, dict(request.get("probe_errors") or {}), _run,
                                                 request.get("learner_error") or error))
    seconds = time.perf_counter() - started

    after = _fence_state(torch)
    fence = [f"the {name} changed from {baseline[name]} to {after[name]}"
             for name in baseline if after[name] != baseline[name]]
    result = {
        "protocol": PROTOCOL,
        "error": error,
        "asks": asks,
        "check": check,
        "check_message": check_message[:MAX_TEXT],
        "variables": describe_variables(namespace, torch),
        "fence": fence,
        "seconds": seconds,
    }
    if tests or test_results:
        result.update(tests=test_results, probe_errors=probe_errors, fingerprint=fingerprint)
    if request.get("export") and (error is None or error["phase"] in ("code", "probe")):
        namespace["raised"] = raised
        result["_exports"] = exchange.export(namespace, setup_ids, torch)
    return result


def _observe(ask: dict, namespace: dict, raised, error, torch) -> dict:
    expr = ask.get("expr")
    if expr is None:  # the code's own exception, or that it ran cleanly
        if error is not None and error["phase"] != "code":
            return {"error": error}
        if raised is None:
            return {"value": {"type": "none", "no_error": True}}
        return {"value": {**describe(raised, torch), "line": error["line"]}}
    try:
        value = eval(compile(expr, "<ask>", "eval"), namespace)
    except BaseException as exc:  # noqa: BLE001
        info = _error_info(exc, "ask", "<ask>")
        if ask.get("mode") == "raises":
            return {"value": describe(exc, torch)}
        return {"error": info}
    if ask.get("mode") == "raises":
        return {"value": {"type": "none", "no_error": True}}
    return {"value": describe(value, torch)}


def _encode(result: dict) -> bytes:
    """The observation as one JSON line; a judged run's exports follow it after the newline."""
    exports = result.pop("_exports", None)
    raw = json.dumps(result, allow_nan=False, default=str).encode()
    if len(raw) > MAX_RESULT:  # keep the verdict-relevant parts, drop the variable listing
        result["variables"] = {}
        raw = json.dumps(result, allow_nan=False, default=str).encode()
    return raw if exports is None else raw + b"\n" + exports


def main() -> None:
    result_fd = os.dup(1)
    os.dup2(2, 1)  # the snippet's prints and warnings go to one captured stream
    sys.stdout.reconfigure(line_buffering=True)
    request = json.loads(sys.stdin.buffer.read(4 << 20))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # input() gets EOF at once instead of hanging
    os.close(devnull)
    _die_with_parent()

    import numpy  # noqa: F401 - imported once so snippets don't pay for it
    import torch

    _limit_resources(float(request.get("timeout", 10.0)))
    _refuse_network()
    os.write(result_fd, b"READY\n")
    try:
        result = run_request(request, torch)
        raw = _encode(result)
    except BaseException as exc:  # noqa: BLE001 - describe failures must still be reported
        raw = json.dumps({"protocol": PROTOCOL, "error": {"phase": "sandbox", "type": type(exc).__name__,
                                                          "message": str(exc)[:MAX_TEXT], "line": None},
                          "asks": {}, "variables": {}, "fence": []}).encode()
    sys.stdout.flush()
    sys.stderr.flush()
    view = memoryview(raw + b"\n")
    while view:
        written = os.write(result_fd, view)
        view = view[written:]
    os._exit(0)


if __name__ == "__main__":
    main()
