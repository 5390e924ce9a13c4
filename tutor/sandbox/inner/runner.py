"""The runner's body, after confinement: run one request and write what it saw.

Three shapes of request (see ``exchange`` for why the last two exist):

* an ordinary run: setup, code, probe, asks, check, all here;
* the learner's half of a judged run (``export``): no check; every name the code
  and the probe bound goes back as data after the observation;
* the judge's half (``imports``): setup, the learner's data bound over it, the check.

The result goes to the result memfd (fd 3) as one JSON line (``wire.Observation``),
followed, for a learner's half, by the exports; then "D" on the done pipe (fd 5).
"""

from __future__ import annotations

import builtins
import linecache
import os
import random
import sys
import time
import types

from tutor.sandbox.inner import exchange, labkit, remote, trace
from tutor.sandbox.inner.describe import describe, describe_variables
from tutor.sandbox.inner.views import observe_views
from tutor.sandbox.inner.tree import DONE_FD, GO_FD, RESULT_FD
from tutor.sandbox.wire import (MAX_TEXT, AskResult, AskSpec, ErrorInfo, Observation, RunRequest, clip_message,
                                granted)

# Modules every drill may import, served from text like a course's helpers (a fresh copy per process):
# ``proptest``, property tests for graders (read here, in the zygote, before any confinement).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "proptest.py"), encoding="utf-8") as _source:
    SERVED = {"proptest": _source.read()}
NETWORK_REFUSED = "network sockets are refused in the sandbox (course fence rule)"


def refuse_network() -> None:
    """An audit hook refusing network sockets with a message that names the rule.

    Only where no seccomp filter refuses them in the kernel (tier 3): an audit hook is a Python
    function called on every audited event, so torch.compile sees its frames (Dynamo counts each
    frame it is offered: a learner's ``counters['frames']`` read one more than under ``python``).
    Where the kernel refuses, the message is added after the fact (``_network_note``)."""
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


def _network_note(exc: BaseException) -> str:
    """The fence rule's words for an error that the kernel's refusal of a socket caused ("" otherwise).

    Read after the run from the exception alone: an OSError raised inside the socket module, with
    the errno a seccomp refusal gives (EPERM, EACCES), or a name lookup that failed (the resolver's
    own socket was refused). Nothing runs in the learner's process while its code does."""
    import errno
    import socket

    if not isinstance(exc, OSError) or NETWORK_REFUSED in str(exc):
        return ""
    tb, from_socket = exc.__traceback__, False
    while tb is not None:
        from_socket = from_socket or tb.tb_frame.f_code.co_filename == getattr(socket, "__file__", None)
        tb = tb.tb_next
    if isinstance(exc, socket.gaierror) or (from_socket and exc.errno in (errno.EPERM, errno.EACCES)):
        return f" — {NETWORK_REFUSED}"
    return ""


def _error_info(exc: BaseException, phase: str, filename: str) -> ErrorInfo:
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None and isinstance(exc, SyntaxError) and exc.filename == filename:
        line = exc.lineno
    return ErrorInfo(phase, type(exc).__name__, clip_message(str(exc) + _network_note(exc)), line)


def _run(source, filename: str, namespace: dict, phase: str):
    """Run ``source`` (text, or a code object compiled from ``filename``: a traced snippet) in ``namespace``."""
    if isinstance(source, str) and not source.strip():
        return None, None
    try:
        exec(compile(source, filename, "exec") if isinstance(source, str) else source, namespace)
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt are snippet errors too
        return exc, _error_info(exc, phase, filename)
    return None, None


def _main_module_namespace() -> dict:
    """A fresh ``__main__`` module's dict, the snippet's globals, installed as ``sys.modules["__main__"]``.

    As in ``python snippet.py``: code that finds a global through its module (Dynamo's guards,
    which evaluate ``G['torch']`` in ``sys.modules[fn.__module__]``; pickle and ``torch.save``
    looking a class up by its ``__module__``) must find the snippet's names, not this runner's.
    Safe to replace: a runner process serves one request and leaves (``run_snippet``)."""
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    return main.__dict__


def _show_source(code: str, filename: str) -> None:
    """Let tools that read source find the code's lines, as they find a script's.

    ``inspect.getsource`` on a function the code defined, ``torch.export.draft_export``'s report,
    Dynamo's "from user code" lines and a warning's source line all read them through
    ``linecache``. Only the code's own text: setup, probe and check stay as they were (a lab's
    fixtures and checks are the course's, and need not be readable by the learner's code)."""
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)  # mtime None: never re-read


def _fence_state(torch) -> dict:
    return {
        "default dtype": str(torch.get_default_dtype()),
        "thread count": torch.get_num_threads(),
        "grad mode": torch.is_grad_enabled(),
        "deterministic algorithms": (torch.are_deterministic_algorithms_enabled(),
                                     torch.is_deterministic_algorithms_warn_only_enabled()),
        "quantized engine": str(torch.backends.quantized.engine),
    }


def _fixtures(request: RunRequest, namespace: dict, torch):
    """A lab's fixtures, before its setup: the judge's half runs their code (the course's code is
    readable there); the learner's half binds only their data, computed in a run of its own."""
    if request.fixtures.strip():
        return _run(request.fixtures, "<fixtures>", namespace, "setup")
    if request.given:
        try:
            exchange.apply(namespace, request.given, torch, request.given_names)
            namespace.pop("raised", None)
        except Exception as exc:  # noqa: BLE001 - the host hands over what the fixtures' run exported
            return exc, ErrorInfo("setup", type(exc).__name__, f"the lab's fixtures could not be read: {str(exc)[:300]}")
    return None, None


def run_request(request: RunRequest, torch, handles: remote.Handles | None = None) -> tuple[Observation, bytes | None]:
    """Run one request; the observation, and the exports of a learner's half (else None).

    ``handles``: a learner's half that stays to serve the judge's calls (``remote.py``) exports
    its functions and objects as handles into this table."""
    baseline = _fence_state(torch)
    torch.manual_seed(0)
    random.seed(0)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(0)

    namespace = _main_module_namespace()
    # a course's helpers (and a lab's files, earlier stages): this process's own copy, served from text
    labkit.install_modules({**SERVED, **dict(request.modules)})
    started = time.perf_counter()
    obs_trace = None
    raised, error = _fixtures(request, namespace, torch)
    if error is None:
        raised, error = _run(request.setup, "<setup>", namespace, "setup")
    # what setup bound, by identity: the learner's half of a judged run tells the judge which names it kept
    setup_ids = {name: id(value) for name, value in namespace.items()} if request.export else {}
    if error is None and request.imports:
        # a judge's half whose learner's half serves calls: the learner's functions and objects as proxies
        channel = remote.Channel(torch, time.monotonic() + request.timeout) if request.peer else None
        try:
            exchange.apply(namespace, request.imports, torch, request.binds, request.rebinds, channel)
            raised = namespace.pop("raised", None)
        except Exception as exc:  # noqa: BLE001 - hostile or unreadable data from the learner's process
            raised, error = exc, ErrorInfo("judge", type(exc).__name__,
                                           f"the learner's results could not be read: {str(exc)[:300]}")
    elif error is None:
        _show_source(request.code, "<snippet>")
        if request.trace is not None:  # a row after every statement (``trace.py``)
            raised, error, obs_trace = trace.run_traced(request.code, "<snippet>", namespace, request.trace, torch,
                                                        _run)
        else:
            raised, error = _run(request.code, "<snippet>", namespace, "code")
        if error is None and request.probe.strip():
            raised, error = _run(request.probe, "<probe>", namespace, "probe")
    obs = Observation(trace=obs_trace)
    if request.tests and not request.imports and error is None:  # a lab's learner half: each test's probe
        obs.probe_errors = labkit.run_probes(request.tests, namespace, _run)

    asks = {ask.key: _observe(ask, namespace, raised, error, torch) for ask in request.asks}

    obs.error, obs.asks = error, asks
    if request.views and not request.imports and (error is None or error.phase == "code"):
        obs.views = observe_views(request.views, namespace, torch)  # what the code left, before a check runs
    if request.check.strip() and (error is None or error.phase == "code"):
        namespace["raised"] = raised
        exc, info = _run(request.check, "<check>", namespace, "check")
        if exc is None:
            obs.check = "passed"
        elif isinstance(exc, AssertionError):
            obs.check, obs.check_message, obs.check_line = "failed", info.message, info.line
        else:
            obs.check, obs.check_message, obs.check_line = "error", f"{info.type}: {info.message}", info.line
    sources = dict(request.sources)
    if request.imports and sources:  # a lab's judge half, graded by tests or by one check: which file was judged
        obs.fingerprint = labkit.fingerprint(next(iter(sources.values()), ""))
    if request.imports and (request.tests or request.rules):  # rules, then each test's check
        if error is None or error.phase != "judge":
            namespace["learner_source"] = dict(sources)  # what a grader may read of the learner's files
            if request.rules:
                obs.tests.append(labkit.check_rules(request.rules, sources))
            obs.tests.extend(labkit.run_tests(request.tests, namespace, dict(request.probe_errors or {}), _run,
                                              request.learner_error or error))
    obs.seconds = time.perf_counter() - started

    after = _fence_state(torch)
    obs.fence = [f"the {name} changed from {baseline[name]} to {after[name]}"
                 for name in baseline if after[name] != baseline[name]]
    obs.variables = describe_variables(namespace, torch)
    exports = None
    if request.export and (error is None or error.phase in ("code", "probe")):
        namespace["raised"] = raised
        exports = (exchange.export(namespace, setup_ids, torch) if handles is None  # as it has always been called
                   else exchange.export(namespace, setup_ids, torch, handles))
    return obs, exports


def _observe(ask: AskSpec, namespace: dict, raised, error: ErrorInfo | None, torch) -> AskResult:
    if ask.expr is None:  # the code's own exception, or that it ran cleanly
        if error is not None and error.phase != "code":
            return AskResult(error=error)
        if raised is None:
            return AskResult(value={"type": "none", "no_error": True})
        return AskResult(value={**describe(raised, torch), "line": error.line if error else None})
    try:
        value = eval(compile(ask.expr, "<ask>", "eval"), namespace)
    except BaseException as exc:  # noqa: BLE001
        if ask.mode == "raises":
            return AskResult(value=describe(exc, torch))
        return AskResult(error=_error_info(exc, "ask", "<ask>"))
    if ask.mode == "raises":
        return AskResult(value={"type": "none", "no_error": True})
    return AskResult(value=describe(value, torch))


def wait_for_request(set_cpu_limit) -> RunRequest:
    """A pre-forked runner, confined already, blocks here until the zygote hands it a request."""
    header = b""
    while len(header) < 8:
        chunk = os.read(GO_FD, 8 - len(header))
        if not chunk:
            os._exit(0)  # the zygote let us go without work
        header += chunk
    os.close(GO_FD)
    size = int.from_bytes(header, "little")
    request = RunRequest.from_json(os.pread(RESULT_FD, size, 0))
    os.ftruncate(RESULT_FD, 0)
    set_cpu_limit(request.timeout)
    return request


def run_snippet(request: RunRequest, env: dict, torch, kernel_refuses_network: bool = False) -> None:
    """Run ``request`` here and now, write its result, and leave (never returns).

    ``kernel_refuses_network``: a seccomp filter refuses sockets (tiers 1 and 2), so no audit hook
    is needed; the learner's code then runs with nothing of the harness's in its interpreter."""
    os.environ.clear()
    os.environ.update(env)
    # torch's pthreadpool is marked stale by its fork handler and rebuilt by the first call that
    # sets the thread count after the fork; two threads making that call at once (OpenMP workers
    # starting their first op) can both take the stale pool, and one gets none: "pool INTERNAL
    # ASSERT FAILED ... Invalid thread pool!" (seen in 35's lab with 4 threads on a busy machine).
    # Rebuilt here, while this process has one thread, with the count it already has.
    # A drill may ask for fewer threads (a small op on a busy machine: 9 ms on one, 76-149 ms on two), never more.
    torch.set_num_threads(min(request.threads, torch.get_num_threads()) if request.threads else torch.get_num_threads())
    if "loopback" not in granted(request.needs) and not kernel_refuses_network:
        refuse_network()
    handles = remote.Handles() if request.serve and request.export else None
    exports = None
    try:
        obs, exports = run_request(request, torch, handles)
        raw = obs.to_json() if exports is None else obs.to_json() + b"\n" + exports
    except BaseException as exc:  # noqa: BLE001 - describe failures must still be reported
        raw = Observation(error=ErrorInfo("sandbox", type(exc).__name__, clip_message(str(exc), MAX_TEXT))).to_json()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    view, offset = memoryview(raw), 0
    while offset < len(raw):
        offset += os.pwrite(RESULT_FD, view[offset:], offset)
    os.ftruncate(RESULT_FD, len(raw))
    serving = handles is not None and exports is not None
    try:
        os.write(DONE_FD, b"S" if serving else b"D")  # "S": complete, and staying to answer calls
    except OSError:
        pass
    if serving:
        remote.serve(handles, torch)
    os._exit(0)
