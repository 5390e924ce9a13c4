"""The zygote as the UI side sees it: one process, its socket, and the thread that reads it.

Also the start-up probe (``inner/probe.py``, run once per interpreter and cached) and
the minimal environment both are started with. ``client.Sandbox`` owns these objects.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import select
import socket
import subprocess
import sys
import threading

from tutor.safe_text import inert
from tutor.sandbox import framing
from tutor.sandbox.kernel_settings import KernelSettings
from tutor.sandbox.wire import Tier

ZYGOTE = "tutor.sandbox.inner"  # run through ``interpreter_command``: found through the installation, not a path
PROBE = "tutor.sandbox.inner.probe"

# ``python -I -S``: no site module, so no ``.pth`` file of the environment runs in the zygote before it is
# confined (an installed package, a lesson pack among them, can ship one: its ``import`` lines run in every
# interpreter that processes it). This bootstrap puts back what ``site`` would have put on ``sys.path`` as
# data only: the site-packages directories of the interpreter's prefix (and the base one where the venv
# includes it), then the directory lines of their ``.pth`` files, never their ``import`` lines, then the
# directories holding the tutor's own packages (an editable install finds them through an ``import`` line).
_BOOTSTRAP = """\
import os, runpy, site, sys
own, module = sys.argv[1], sys.argv[2]
prefixes = [sys.prefix]
exe_dir = os.path.dirname(os.path.abspath(sys.executable))  # a venv, found as site.venv() finds it
for conf in (os.path.join(exe_dir, "pyvenv.cfg"), os.path.join(os.path.dirname(exe_dir), "pyvenv.cfg")):
    if os.path.isfile(conf):
        system_site = "true"
        with open(conf, encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition("=")
                if key.strip().lower() == "include-system-site-packages":
                    system_site = value.strip().lower()
        sys.prefix = sys.exec_prefix = os.path.dirname(exe_dir)
        prefixes = [sys.prefix] + ([sys.base_prefix] if system_site == "true" else [])
        break
found = [d for d in site.getsitepackages(prefixes) if os.path.isdir(d)]
for d in list(found):
    try:
        names = sorted(n for n in os.listdir(d) if n.endswith(".pth") and not n.startswith("."))
    except OSError:
        continue
    for name in names:
        try:
            with open(os.path.join(d, name), encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.rstrip()
            if not line or line.startswith(("#", "import ", "import\t")):
                continue
            path = os.path.abspath(os.path.join(d, line))
            if os.path.isdir(path) and path not in found:
                found.append(path)
found += [d for d in own.split(os.pathsep) if d and os.path.isdir(d) and d not in found]
sys.path.extend(p for p in found if p not in sys.path)
site.setquit()  # exit() and quit() for snippets, as site.main() would define them (no code of any package runs)
sys.argv = [sys.argv[0]] + sys.argv[3:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def _own_package_dirs() -> str:
    """Where the tutor's packages the sandbox imports live (``tutor``; ``capstone``, which drills import)."""
    import importlib.util

    dirs = []
    for name in ("tutor", "capstone"):
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec else []:
            parent = os.path.dirname(os.path.realpath(location))
            if parent not in dirs:
                dirs.append(parent)
    return os.pathsep.join(dirs)


def interpreter_command(python: str, module: str, *args: str) -> list[str]:
    """``python`` running ``module`` as ``-m`` would, isolated and with no ``.pth`` file's code run (above)."""
    return [python, "-I", "-S", "-c", _BOOTSTRAP, _own_package_dirs(), module, *args]


class SandboxUnavailable(RuntimeError):
    pass


class _ZygoteDied(Exception):
    pass


def zygote_environment(kernels: KernelSettings | None = None) -> dict[str, str]:
    """Everything the zygote's environment holds: no secrets, nothing from the learner's shell.

    ``kernels`` may add the one variable a chosen setting needs (ATen's CPU capability)."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": "/nonexistent",
        "OPENBLAS_NUM_THREADS": "1",
        # OpenMP's idle workers sleep instead of spinning: a class server runs many learners' snippets on
        # few cores, and spinning workers burn the cores the other runs need (results do not change)
        "OMP_WAIT_POLICY": "PASSIVE",
        "CUDA_VISIBLE_DEVICES": "",
        "TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS": "0",  # read when torch imports: see inner/compile_cache.py
        **(kernels.environment() if kernels else {}),
    }


# ---------------------------------------------------------------- the probe

_probe_cache: dict[str, dict] = {}
_probe_lock = threading.Lock()


def probe(python: str | None = None) -> dict:
    """What ``probe.py`` finds on this machine (run once per process and interpreter, then cached)."""
    python = python or sys.executable
    with _probe_lock:
        if python not in _probe_cache:
            _probe_cache[python] = _run_probe(python)
        return _probe_cache[python]


def _run_probe(python: str) -> dict:
    try:
        done = subprocess.run(interpreter_command(python, PROBE), env=zygote_environment(), cwd="/",
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        report = json.loads(done.stdout[-65536:] or b"null")
    except (OSError, subprocess.TimeoutExpired, ValueError, RecursionError) as exc:
        return {"tier": Tier.WEAK, "error": f"the probe failed: {exc}"}
    if not isinstance(report, dict) or report.get("tier") not in (Tier.NAMESPACES, Tier.LANDLOCK, Tier.WEAK):
        return {"tier": Tier.WEAK, "error": "the probe said nothing usable: "
                                      + done.stderr.decode("utf-8", "replace")[-300:]}
    return report


# ---------------------------------------------------------------- one zygote process


class _Zygote:
    def __init__(self, python: str, tier: Tier, pool: int, read_only: tuple[tuple[int, str], ...] = (),
                 compile_cache: str | None = None, warm_compile: bool = False, output_dir: str | None = None,
                 kernels: KernelSettings | None = None):
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # each read-only directory as the descriptor the client holds on it, and the path it is shown at
        extra = [arg for fd, path in read_only for arg in ("--read-only", f"{fd}:{path}")]
        if compile_cache:
            extra += ["--compile-cache", compile_cache]
        if warm_compile:
            extra.append("--warm-compile")
        if output_dir:
            extra += ["--output-dir", output_dir]
        if kernels and kernels.threads:
            extra += ["--threads", str(kernels.threads)]
        try:
            self.proc = subprocess.Popen(
                interpreter_command(python, ZYGOTE, "--tier", tier, "--fd", str(child.fileno()), "--pool", str(pool),
                                    *extra),
                env=zygote_environment(kernels), cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, pass_fds=(child.fileno(), *(fd for fd, _ in read_only)),
                start_new_session=True)
        except OSError:
            parent.close()
            raise
        finally:
            child.close()
        self.sock = parent
        self.tier = tier
        self.ready: concurrent.futures.Future = concurrent.futures.Future()
        # True once torch.compile's modules are imported (``--warm-compile``); False when they never will be
        self.compile_warmed: concurrent.futures.Future = concurrent.futures.Future()
        self.info: dict = {}
        self.handlers: dict[int, object] = {}
        self.dead = False
        self.death = ""
        self.closing = False
        self.stderr_tail = bytearray()
        self.send_lock = threading.Lock()
        self.thread = threading.Thread(target=self._read_loop, name="sandbox-zygote", daemon=True)
        self.thread.start()

    def _read_loop(self) -> None:
        decoder = framing.Decoder()
        stderr = self.proc.stderr
        watched = [self.sock, stderr]
        try:
            while not self.closing:
                ready, _, _ = select.select(watched, [], [], 0.5)
                if stderr in ready:
                    data = os.read(stderr.fileno(), 65536)
                    if data:
                        self.stderr_tail = (self.stderr_tail + data)[-8192:]
                    else:
                        watched.remove(stderr)
                if self.sock in ready:
                    data = self.sock.recv(1 << 20)
                    if not data:
                        self.death = "it closed its connection"
                        break
                    for header, blobs in decoder.feed(data):
                        self._dispatch(header, blobs)
        except framing.FrameError as exc:
            self.death = f"it sent a malformed frame ({exc})"
        except (OSError, ValueError) as exc:
            self.death = self.death or f"its connection failed ({exc})"
        finally:
            self._died()

    def _dispatch(self, header: dict, blobs: list[bytes]) -> None:
        op = header.get("op")
        if op == "ready":
            self.info = header
            if not self.ready.done():
                self.ready.set_result(header)
            if not header.get("compile_warming") and not self.compile_warmed.done():
                self.compile_warmed.set_result(False)
        elif op == "warmed":  # torch.compile's modules are imported too (``--warm-compile``)
            self.info = {**self.info, "compile_warm": True}
            if not self.compile_warmed.done():
                self.compile_warmed.set_result(True)
        elif op == "error":
            self.death = f"it could not start: {str(header.get('message', ''))[:500]}"
            if not self.ready.done():
                self.ready.set_exception(SandboxUnavailable(self.death))
        else:
            handler = self.handlers.get(header.get("id"))
            if handler is not None:
                handler(header, blobs)

    def _died(self) -> None:
        self.dead = True
        if not self.closing:
            code = self.proc.poll()
            if code is not None and not self.death.startswith("it could not"):
                self.death = f"{self.death}; exit status {code}" if self.death else f"exit status {code}"
            tail = self.stderr_tail.decode("utf-8", "replace").strip().splitlines()[-1:]
            if tail:
                self.death += f": {inert(tail[0])[:200]}"
        if not self.ready.done():
            self.ready.set_exception(SandboxUnavailable(self.death or "the zygote stopped"))
        if not self.compile_warmed.done():
            self.compile_warmed.set_result(False)
        for handler in list(self.handlers.values()):
            handler({"op": "died"}, [])

    def send(self, header: dict, *blobs: bytes) -> None:
        frame = framing.pack(header, *blobs)
        with self.send_lock:
            if self.dead:
                raise _ZygoteDied(self.death or "the zygote stopped")
            try:
                self.sock.sendall(frame)
            except OSError as exc:
                raise _ZygoteDied(f"its connection failed ({exc})") from None

    def close(self, wait: float = 3.0) -> None:
        if self.closing:
            return
        try:
            self.send({"op": "shutdown"})
        except _ZygoteDied:
            pass
        self.closing = True
        try:
            self.proc.wait(wait)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # its children die with it (parent-death signal)
            self.proc.wait()
        try:
            self.sock.close()
        except OSError:
            pass
        if threading.current_thread() is not self.thread:
            self.thread.join(2)
        if self.proc.stderr:
            self.proc.stderr.close()
        base = self.info.get("scratch_base")
        if (isinstance(base, str) and base.startswith("/") and os.path.normpath(base) == base
                and os.path.basename(base).startswith("pytorch-tutor-sandbox-")):
            from tutor.sandbox.inner.scratch import remove_tree  # standard library only

            # The zygote removes it itself unless it was killed. Iterative and as the owner: the
            # snippet may have left a tree deeper than the recursion limit, or unreadable modes.
            remove_tree(base)
