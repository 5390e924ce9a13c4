"""``pytorch-tutor doctor``: which isolation tier this machine gets, each layer's status, checked from inside.

The tier comes from the start-up probe (a dry run of each tier); the layers are
what the running zygote applies; the last part runs one real snippet and reports
what it sees from inside its sandbox, so the report does not merely repeat the
configuration.
"""

from __future__ import annotations

import sys
from typing import TextIO

from tutor.safe_text import inert
from tutor.sandbox.client import Sandbox, probe, run_sync
from tutor.sandbox.kernel_settings import available
from tutor.sandbox.wire import AskSpec, RunRequest, Tier, TooLarge, plain_value
from tutor.wording import count

INSIDE = r"""
import os, torch
version = torch.__version__
pid = os.getpid()
uid = os.getuid()
status = {}
for line in open('/proc/self/status'):
    key, _, value = line.partition(':')
    if key in ('CapEff', 'CapPrm', 'CapBnd', 'Seccomp', 'NoNewPrivs'):
        status[key] = value.strip()
try:
    interfaces = sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:])
except OSError:
    interfaces = []
try:
    home_visible = sorted(set(os.listdir(HOST_HOME)) & set(HOST_HOME_ENTRIES))
except OSError as exc:
    home_visible = type(exc).__name__
import socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    inet = 'allowed'
except OSError as exc:
    inet = type(exc).__name__
try:
    processes = len([p for p in os.listdir('/proc') if p.isdigit()])
except OSError as exc:
    processes = f'listing denied ({type(exc).__name__})'
"""


def _bounding(capbnd) -> str:
    """What a CapBnd mask from /proc/PID/status means: "empty", or how much is left and why that is harmless."""
    try:
        mask = int(str(capbnd), 16)
    except ValueError:
        return "unknown"
    if mask == 0:
        return "empty"
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            total = f" of {int(f.read()) + 1}"
    except (OSError, ValueError):
        total = ""
    return (f"not emptied: {bin(mask).count('1')}{total} capabilities; emptying it takes CAP_SETPCAP, and "
            "under no_new_privs it grants nothing")


def _value(result, key: str):
    described = result.observation.variables.get(key) if result.observation else None
    try:
        return plain_value(described) if described is not None else None
    except TooLarge:
        return None


def print_report(out: TextIO) -> int:
    sandbox = Sandbox()
    report = probe(sandbox.python)
    sandbox.choose_tier()
    print(f"python:   {sys.executable}", file=out)
    print(f"sandbox:  {sandbox.tier}" + (f" — forced ({sandbox.forced_tier})" if sandbox.forced_tier else
                                         " — chosen by the start-up probe"), file=out)
    if sandbox.tier_note:
        print(f"          {sandbox.tier_note}", file=out)
    if report.get("tier") != Tier.NAMESPACES:
        why = report.get("namespaces", {}).get("error") or report.get("error") or ""
        if why:
            print(f"          namespaces: refused ({inert(str(why))[:200]})", file=out)
    try:
        sandbox.start_sync()
    except Exception as exc:  # noqa: BLE001 - the report is the point
        print(f"zygote:   cannot start: {exc}", file=out)
        return 1
    info = sandbox.info
    print(f"zygote:   pid {info.get('pid')}, torch {info.get('torch')}, warmed in {info.get('warm_seconds')} s, "
          f"{count(int(info.get('threads') or 0), 'thread')} per snippet, CPU kernels {info.get('cpu_capability')} "
          f"(this CPU can run: {', '.join(available())})", file=out)
    print("layers:", file=out)
    width = max((len(k) for k in sandbox.layers), default=10)
    for name, status in sandbox.layers.items():
        print(f"  {name:<{width}}  {status}", file=out)
    if sandbox.can_confine_third_party:
        print("third-party lessons: can be confined on this tier", file=out)
    else:
        print("third-party lessons: REFUSED unless you pass --trust-lessons — this tier cannot confine them",
              file=out)
    import os

    home = os.path.expanduser("~")
    try:
        entries = sorted(os.listdir(home))
    except OSError:
        entries = []
    result = run_sync(RunRequest(code=INSIDE, setup=f"HOST_HOME = {home!r}\nHOST_HOME_ENTRIES = {entries!r}",
                                 asks=(AskSpec("version", "version"),)), sandbox)
    if not result.ok:
        print(f"torch:    cannot run a snippet: {result.message}", file=out)
        sandbox.close_sync()
        return 1
    fields = _value(result, "status") or {}
    interfaces = _value(result, "interfaces") or []
    print("checked from inside a run:", file=out)
    print(f"  pid {_value(result, 'pid')}, uid {_value(result, 'uid')}, CapEff {fields.get('CapEff')}, "
          f"CapPrm {fields.get('CapPrm')}, Seccomp {fields.get('Seccomp')} (2 = filter), "
          f"NoNewPrivs {fields.get('NoNewPrivs')}", file=out)
    print(f"  capability bounding set: CapBnd {fields.get('CapBnd')} ({_bounding(fields.get('CapBnd'))})", file=out)
    claimed = sandbox.layers.get("capabilities", "")
    if "bounding set emptied" in claimed and _bounding(fields.get("CapBnd")) != "empty":
        print("  WARNING: the layer list says the bounding set is emptied, but this run's is not", file=out)
    memory = sandbox.layers.get("memory cap")
    if memory:
        print("  memory: " + ("a cgroup caps each run (see 'memory cap' above)" if memory.startswith("on") else
                              "no total cap, RLIMIT_AS per process only (see 'memory cap' above)"), file=out)
    print(f"  network interfaces: {', '.join(map(str, interfaces)) or 'none visible'}; "
          f"AF_INET socket: {_value(result, 'inet')}", file=out)
    seen = _value(result, "home_visible")
    if isinstance(seen, list):
        shown = f"{len(seen)} of its {len(entries)} entries visible" + (f" ({', '.join(seen)})" if seen else "")
    else:
        shown = f"not readable ({seen})"
    print(f"  processes visible in /proc: {_value(result, 'processes')}; your home {home}: {inert(shown)}",
          file=out)
    version = result.observation.asks["version"].value.get("value", "?")
    print(f"torch:    {version} (a trivial snippet ran in {result.seconds * 1000:.0f} ms, warm)", file=out)
    sandbox.close_sync()
    return 0
