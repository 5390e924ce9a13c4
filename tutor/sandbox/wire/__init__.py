"""The one wire between the two sides of the sandbox: what crosses it, and how large it may be.

Both sides import this package and nothing else of each other: the UI side
(``client.py``, ``doctor.py``, the tutor's grading) and the inner side (the
package ``tutor.sandbox.inner``: the zygote, its confined runners, the start-up
probe). So it is standard library only, like the inner side must be.

What it declares:

* the protocol version and every size cap, once;
* the grantable ``needs`` (``course/schema.py`` reads them from here);
* the run request (:class:`RunRequest`, sent as JSON with :meth:`RunRequest.to_json`
  and read back with :meth:`RunRequest.from_json`);
* the result schema (:class:`Observation` and its parts), written by the runner with
  :meth:`Observation.to_json` and read by the UI side with :func:`read_observation`,
  which treats every byte as hostile: size and nesting are capped before
  ``json.loads`` runs and each field is checked; nothing is ever unpickled;
* the described-value format (``values.py``: what a runner says about a value, a
  tensor's shape and stride, a number, an exception) with its one reader,
  :func:`read_value`, and :func:`plain_value`, which turns a checked description
  back into plain Python.

Display text is made inert by the UI side: :func:`read_observation` takes the
cleaning function (``tutor.safe_text.inert``) as an argument, since the inner
side may not import the tutor.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Callable

from tutor.sandbox.wire.checks import as_bool, as_dict, as_int, as_line, as_list, as_number, as_text, one_of, same
from tutor.sandbox.wire.trace import Trace, TraceSpec, read_spec, read_trace
from tutor.sandbox.wire.values import (FLOAT_WORDS, MAX_DEPTH, TooLarge, Unreadable,  # noqa: F401 - part of the wire
                                       plain_value, read_value, tensor_values)
from tutor.sandbox.wire.views import (MAX_VIEWS, VIEW_KINDS, ViewSpec, read_view,  # noqa: F401 - part of the wire
                                      read_view_spec)

PROTOCOL = 2

# ---------------------------------------------------------------- caps

MAX_OBSERVATION = 1 << 20  # the observation line a runner writes; past it, it drops its variable listing
MAX_EXPORT = 8 << 20  # a judged run's exported values (``inner/exchange/``), which follow the observation
MAX_NAMES = 1 << 16  # names a judge's half may bind from an export (``RunRequest.binds``)
MAX_RESULT = MAX_OBSERVATION + MAX_EXPORT + 4096  # what the zygote reads from a runner's result memfd
MAX_TEXT = 2000  # a message, a string value
MAX_VARIABLES = 50  # names described per run
MAX_ITEMS = 64  # items of a described list, tuple, set or dict
MAX_VALUES = 64  # a tensor's values are sent when it has at most this many elements
OUTPUT_LIMIT = 64 * 1024  # bytes of a run's captured output the UI side keeps
DEFAULT_TIMEOUT = 10.0
MAX_TIMEOUT = 600.0
SLACK = 1.0  # seconds past a snippet's limit for confinement, describing values and writing the result

# What one run may use (rlimits and quotas, set by ``inner/tree.py``; ``doctor`` reports them)
ADDRESS_SPACE = 3 << 30
FILE_SIZE = 16 << 20
OPEN_FILES = 256
PROCESSES = 64  # processes and threads
SCRATCH_BYTES = 64 << 20
SCRATCH_INODES = 4096
CGROUP_RUN_MEMORY = 3 << 30  # per run, like RLIMIT_AS; memory.swap.max 0 so it cannot be dodged into swap

# ---------------------------------------------------------------- isolation tiers


class Tier(StrEnum):
    """The isolation runs get, ordered by strength: ``Tier.NAMESPACES > Tier.LANDLOCK > Tier.WEAK > Tier.NONE``.

    The values are what crosses the wire and the command line ("1", "2", "3", "none"), so
    ``Tier("2")`` reads one. Ordering compares strength, never the strings ("none" < "1" as
    text); comparing a tier with anything but a tier is a TypeError, not a string comparison.
    """

    NAMESPACES = "1"  # user, pid, network, ipc, uts and mount namespaces, a private root, Landlock, seccomp
    LANDLOCK = "2"  # no namespaces: rlimits, Landlock, seccomp
    WEAK = "3"  # rlimits and a separate session only: built-in lessons only
    NONE = "none"  # no confinement at all, for benchmarks

    @property
    def strength(self) -> int:
        return _TIER_STRENGTH[self]

    @property
    def confines_third_party(self) -> bool:
        """Whether lessons from outside the built-in course may run in this tier without an explicit opt-in."""
        return self >= Tier.LANDLOCK

    def _against(self, other: object) -> int:
        if not isinstance(other, Tier):
            raise TypeError(f"a sandbox tier compares with a tier, not with {type(other).__name__} {other!r}")
        return self.strength - other.strength

    def __lt__(self, other: object) -> bool:
        return self._against(other) < 0

    def __le__(self, other: object) -> bool:
        return self._against(other) <= 0

    def __gt__(self, other: object) -> bool:
        return self._against(other) > 0

    def __ge__(self, other: object) -> bool:
        return self._against(other) >= 0

    __hash__ = StrEnum.__hash__


_TIER_STRENGTH = {Tier.NAMESPACES: 3, Tier.LANDLOCK: 2, Tier.WEAK: 1, Tier.NONE: 0}

# ---------------------------------------------------------------- what a lesson may ask for

# "processes": fork (e.g. DataLoader workers; with a private /dev/shm); "exec": running programs
# (e.g. torch.compile's C++ compiler; implies processes); "loopback": TCP/UDP on a network
# namespace's own loopback (e.g. gloo).
GRANTS = ("processes", "exec", "loopback")
IMPLIED = {"exec": ("processes",)}

# What the tutor's own tools may ask for, never a lesson (``course/schema.py`` reads only GRANTS):
# "output-dir": the one host directory the caller gave ``Sandbox(output_dir=...)``, read-write at
# OUTPUT_TARGET (tier 1), for a run that writes artifacts the tutor then uses (the capstone's
# workspace under ``pytorch-tutor capstone --package mine``). Such a run may last OUTPUT_RUN_TIMEOUT.
TOOL_GRANTS = ("output-dir",)
OUTPUT_TARGET = "/workspace"
OUTPUT_RUN_TIMEOUT = 6 * 3600.0
OUTPUT_BYTES = 1 << 30  # what the output directory may hold during a run (measured like a scratch)
OUTPUT_FILES = 20_000


def granted(needs) -> frozenset:
    """The grants a set of declared needs amounts to (with what each implies)."""
    out = set(needs)
    for need in list(out):
        out.update(IMPLIED.get(need, ()))
    return frozenset(out)


# ---------------------------------------------------------------- the conversation (frames: ``framing.py``)
#
# UI → zygote:  {"op": "run", "id", "request": RunRequest, "output_limit"} | {"op": "kill", "id"} | {"op": "shutdown"}
# zygote → UI:  {"op": "ready", ...facts} | {"op": "warmed"} | {"op": "error", "message"} | {"op": "started", "id", "pid"}
#               | {"op": "done", "id", ...how it ended} + blobs [result bytes, output bytes]

# ---------------------------------------------------------------- the request


@dataclass(frozen=True)
class AskSpec:
    key: str
    expr: str | None  # None: observe the code's own exception
    mode: str = "value"  # "raises": observe the exception evaluating ``expr`` raises, or none


@dataclass(frozen=True)
class TestSpec:
    """A lab's named test: its probe runs in the learner's half, its check in the judge's (``inner/labkit.py``)."""

    name: str
    check: str = ""
    probe: str = ""


@dataclass(frozen=True)
class ErrorInfo:
    """An exception raised by the snippet: where and what."""

    phase: str  # setup | code | probe | check | ask | judge | sandbox
    type: str
    message: str
    line: int | None = None


@dataclass(frozen=True)
class RunRequest:
    code: str
    setup: str = ""
    check: str = ""
    asks: tuple[AskSpec, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    probe: str = ""  # runs after the code, in the learner's process: computes what a judged check needs
    # A repair or a lab is judged: its check runs in a second, fresh process that sees only the
    # data the first one exported (see ``inner/exchange/``); ``Sandbox.run`` does both halves,
    # so a judged request itself never crosses the wire.
    judged: bool = False
    # A judged request: the names the drill's own sources (its code, solution, starter) bind, read on
    # the host (``tutor.sandbox.bindings``); the UI side's business, not sent.
    declares: tuple[str, ...] = ()
    export: bool = False  # the learner's half: send every bound name back as data
    imports: str = ""  # the judge's half: the learner's exported data
    # The judge's half: the only names it binds from ``imports`` besides what its own setup bound, and
    # the setup constants it takes from them, both read on the host from the sources (``Sandbox.run``)
    binds: tuple[str, ...] = ()
    rebinds: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()  # grants beyond the default confinement (``GRANTS``)
    # The learner-side process of a run with `exec` may keep compiled code (torch.compile's
    # Inductor cache) in this course's compile cache; see ``inner/compile_cache.py``.
    compile_cache: bool = False
    # Labs (see ``inner/labkit.py``). Modules importable in the sandbox, as (name, source): the course's
    # helpers, and for the learner's half the learner's other files and earlier stages; the judge's
    # half gets ``judge_modules`` instead (the helpers and the references), never the learner's code.
    modules: tuple[tuple[str, str], ...] = ()
    judge_modules: tuple[tuple[str, str], ...] = ()  # the UI side's business: sent as the judge's `modules`
    tests: tuple[TestSpec, ...] = ()  # named tests: probe in the learner's half, check in the judge's
    rules: dict | None = None  # rules on the learner's source, checked in the judge's half
    sources: tuple[tuple[str, str], ...] = ()  # the judge's half: the learner's files, as text (data)
    probe_errors: dict[str, ErrorInfo] | None = None  # the judge's half: what each test's probe raised
    learner_error: ErrorInfo | None = None  # the judge's half: the learner's code raised this
    trace: TraceSpec | None = None  # run the code traced (``inner/trace.py``): rows come back in the observation
    views: tuple[ViewSpec, ...] = ()  # views of what PyTorch recorded, made after the code (``wire/views.py``)
    # Files and directories inside the sandbox's read-only course directories that this run may not
    # read (a lab's reference, in the learner's half: ``tutor/sandbox/hidden_modules.py``); host paths.
    hidden: tuple[str, ...] = ()
    threads: int = 0  # intra-op threads for this run, at most the sandbox's (0: the sandbox's own)
    # A lab's fixtures (``Sandbox.run``): code the judge's half runs before the setup; the learner's half
    # instead binds ``given``, the data of its ``given_names`` (UPPER_CASE) from a run of its own.
    fixtures: str = ""
    given: str = ""
    given_names: tuple[str, ...] = ()
    # Proxied calls (``inner/remote.py``): a learner's half that stays, after its export, to answer
    # the judge's calls into its functions and objects (``serve``); the judge's half that makes
    # them names that run by the host's id for it (``peer``), and the zygote joins the two.
    serve: bool = False
    peer: int = 0

    def to_json(self) -> bytes:
        if self.judged:
            raise ValueError("a judged request runs as two halves; send those (Sandbox.run does)")
        data = asdict(self)
        del data["judged"], data["judge_modules"], data["declares"]
        data["protocol"] = PROTOCOL
        return json.dumps(data).encode()

    @classmethod
    def from_json(cls, raw: bytes | str) -> "RunRequest":
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("protocol") != PROTOCOL:
            raise ValueError("a run request of another protocol")
        asks = []
        for a in as_list(data.get("asks", [])):
            a = as_dict(a)
            expr = a.get("expr")
            asks.append(AskSpec(as_text(a["key"], 2000), None if expr is None else as_text(expr),
                                one_of(a.get("mode", "value"), ("value", "raises"))))
        timeout = as_number(data.get("timeout", DEFAULT_TIMEOUT))
        needs = tuple(as_text(n, 40) for n in as_list(data.get("needs", [])))
        if not 0 < timeout <= (OUTPUT_RUN_TIMEOUT if "output-dir" in needs else MAX_TIMEOUT):
            raise ValueError(f"timeout {timeout!r} out of range")
        return cls(code=as_text(data.get("code", ""), 4 << 20), setup=as_text(data.get("setup", ""), 4 << 20),
                   check=as_text(data.get("check", ""), 4 << 20), asks=tuple(asks), timeout=float(timeout),
                   probe=as_text(data.get("probe", ""), 4 << 20), export=as_bool(data.get("export", False)),
                   imports=as_text(data.get("imports", ""), MAX_EXPORT + 4096), needs=needs,
                   binds=_names(data.get("binds", [])), rebinds=_names(data.get("rebinds", [])),
                   compile_cache=as_bool(data.get("compile_cache", False)),
                   modules=_pairs(data.get("modules", [])), sources=_pairs(data.get("sources", [])),
                   tests=tuple(TestSpec(as_text(t["name"], 200), as_text(t.get("check", "")), as_text(t.get("probe", "")))
                               for t in map(as_dict, as_list(data.get("tests", [])))),
                   rules=None if data.get("rules") is None else as_dict(data["rules"]),
                   probe_errors=None if data.get("probe_errors") is None else
                   {as_text(k, 200): _error(v, same) for k, v in as_dict(data["probe_errors"]).items()},
                   learner_error=_error(data.get("learner_error"), same), trace=read_spec(data.get("trace")),
                   views=tuple(read_view_spec(v) for v in as_list(data.get("views", []))[:MAX_VIEWS]),
                   hidden=tuple(as_text(p, 4096) for p in as_list(data.get("hidden", []))[:MAX_HIDDEN]),
                   fixtures=as_text(data.get("fixtures", ""), 4 << 20), threads=_threads(data.get("threads", 0)),
                   given=as_text(data.get("given", ""), MAX_EXPORT + 4096), given_names=_names(data.get("given_names", [])),
                   serve=as_bool(data.get("serve", False)), peer=as_int(data.get("peer", 0)))


MAX_HIDDEN = 256  # hidden paths of one run: a lab forbids a handful of modules


def _threads(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 64:
        raise ValueError("threads must be a whole number from 0 to 64")
    return v


def _names(v: Any) -> tuple[str, ...]:
    """Python names: the judge's half's ``binds`` and ``rebinds``."""
    return tuple(as_text(n, 200) for n in as_list(v)[:MAX_NAMES])


def _pairs(v: Any) -> tuple[tuple[str, str], ...]:
    """(name, text) pairs: a lab's modules and sources."""
    out = []
    for pair in as_list(v):
        pair = as_list(pair)
        if len(pair) != 2:
            raise TypeError("expected [name, text] pairs")
        out.append((as_text(pair[0], 200), as_text(pair[1], 4 << 20)))
    return tuple(out)


# ---------------------------------------------------------------- the result


@dataclass(frozen=True)
class AskResult:
    value: dict | None = None  # the described value
    error: ErrorInfo | None = None


CHECK_STATES = ("passed", "failed", "error", "skipped")
MAX_TESTS = 80


@dataclass(frozen=True)
class TestResult:
    name: str
    status: str  # passed | failed | error
    message: str = ""
    line: int | None = None  # in the test's check


@dataclass
class Observation:
    """What the runner saw. Values are descriptions (see ``inner/describe.py``)."""

    error: ErrorInfo | None = None  # the setup's or code's exception, if any
    asks: dict[str, AskResult] = field(default_factory=dict)
    check: str = "skipped"  # passed | failed | error | skipped
    check_message: str = ""  # the assertion's message (failed) or the exception (error)
    check_line: int | None = None  # the check's line that failed, a field of its own
    variables: dict[str, dict] = field(default_factory=dict)
    fence: list[str] = field(default_factory=list)  # fence-rule violations
    seconds: float = 0.0
    tests: list[TestResult] = field(default_factory=list)  # a lab's named tests, in order
    probe_errors: dict[str, ErrorInfo] = field(default_factory=dict)  # the learner's half: per test
    fingerprint: str = ""  # the learner's main file, normalised (see ``inner/labkit.fingerprint``)
    trace: Trace | None = None  # a traced run's rows (``wire/trace.py``)
    views: list[dict] = field(default_factory=list)  # one per requested view, in order (``wire/views.py``)

    @property
    def check_text(self) -> str:
        """The check's outcome for display: ``line 3: expected ...``."""
        if self.check_line is None:
            return self.check_message
        return f"line {self.check_line}: {self.check_message}" if self.check_message else f"line {self.check_line}"

    def to_json(self) -> bytes:
        """One JSON line (strict: no NaN), its variable listing dropped if it would pass the cap."""
        data = asdict(self)
        data["protocol"] = PROTOCOL
        raw = json.dumps(data, allow_nan=False, default=str).encode()
        for drop in ("variables", "views"):  # keep the verdict-relevant parts
            if len(raw) <= MAX_OBSERVATION:
                break
            data[drop] = {} if drop == "variables" else [
                {"kind": v.get("kind", "storage"), "of": v.get("of", ""), "error": "the view was too large to send"}
                for v in data[drop]]
            raw = json.dumps(data, allow_nan=False, default=str).encode()
        return raw


def clip_message(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut to about ``limit`` characters, keeping its end: the line that says why comes last.

    A compiler's or torch.compile's error is a long report whose cause ("No space left on
    device", "File too large", the compiler's own last words) is at the bottom; cutting the
    tail would keep the boilerplate and drop the reason. So the head is cut, never the last
    lines: up to half the budget goes to the end, on whole lines where possible.
    """
    if len(text) <= limit:
        return text
    tail_budget = limit // 2
    tail = text[-tail_budget:]
    newline = tail.find("\n")
    if 0 <= newline < len(tail) - 1 and text.rstrip("\n").count("\n"):
        tail = tail[newline + 1:]  # start the kept end on a line of its own
    head = text[:max(0, limit - len(tail) - 60)]
    return f"{head}\n… [{len(text) - len(head) - len(tail):,} characters cut] …\n{tail}"


class BadResult(ValueError):
    """The runner's result is not something we accept (too big, too deep, malformed)."""


def _depth_ok(raw: bytes) -> bool:
    depth = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return True


def read_observation(raw: bytes, clean: Callable[[str], str] = same) -> Observation:
    """Parse and validate a runner's JSON; raise :class:`BadResult` on anything odd.

    ``clean`` is applied to every string that may be displayed (the UI side passes ``inert``).
    """
    if len(raw) > MAX_OBSERVATION:
        raise BadResult(f"result larger than {MAX_OBSERVATION:,} bytes")
    if not _depth_ok(raw):
        raise BadResult(f"result nested deeper than {MAX_DEPTH} levels")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise BadResult(f"result is not valid JSON: {str(exc)[:80]}") from None
    if not isinstance(data, dict) or data.get("protocol") != PROTOCOL:
        raise BadResult("result has the wrong protocol")
    try:
        return Observation(
            error=_error(data.get("error"), clean),
            asks={clean(as_text(k, 2000)): _ask(v, clean) for k, v in as_dict(data.get("asks", {})).items()},
            check=one_of(data.get("check", "skipped"), CHECK_STATES),
            check_message=clean(as_text(data.get("check_message", ""))),
            check_line=as_line(data.get("check_line")),
            variables={clean(as_text(k, 200)): read_value(v, clean) for k, v in as_dict(data.get("variables", {})).items()},
            fence=[clean(as_text(f)) for f in as_list(data.get("fence", []))],
            seconds=float(as_number(data.get("seconds", 0.0))),
            tests=[_test(t, clean) for t in as_list(data.get("tests", []))[:MAX_TESTS]],
            probe_errors={clean(as_text(k, 200)): _error(v, clean)
                          for k, v in as_dict(data.get("probe_errors", {})).items()},
            fingerprint=clean(as_text(data.get("fingerprint", ""), 64)),
            trace=read_trace(data.get("trace"), clean),
            views=[read_view(v, clean) for v in as_list(data.get("views", []))[:MAX_VIEWS]],
        )
    except (TypeError, KeyError, AttributeError, IndexError) as exc:
        raise BadResult(f"result is malformed: {exc}") from None


def _error(v: Any, clean: Callable[[str], str]) -> ErrorInfo | None:
    if v is None:
        return None
    d = as_dict(v)
    return ErrorInfo(clean(as_text(d.get("phase", "code"), 40)), clean(as_text(d["type"], 200)),
                     clean(as_text(d.get("message", ""))), as_line(d.get("line")))


def _test(v: Any, clean: Callable[[str], str]) -> TestResult:
    d = as_dict(v)
    return TestResult(clean(as_text(d["name"], 200)), one_of(d.get("status"), ("passed", "failed", "error")),
                      clean(as_text(d.get("message", ""))), as_line(d.get("line")))


def _ask(v: Any, clean: Callable[[str], str]) -> AskResult:
    d = as_dict(v)
    return AskResult(value=read_value(d["value"], clean) if d.get("value") is not None else None,
                     error=_error(d.get("error"), clean))
