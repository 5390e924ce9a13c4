"""The abuse suite: hostile snippets, each with its safe outcome asserted on tier 1 and tier 2.

Each case runs against the ``sb`` fixture: the tier the probe picks here, tier 2 under a
seccomp filter that forbids namespaces (as this process's user), and the real tier 2 (a
fresh non-root uid on a host that forbids namespaces; see ``conftest.py``). After each case
the fixture checks
that the same zygote still answers and nothing is left in flight. Cases that need
tier 1 (a pid namespace, or a grant that only tier 1 gives) skip on tier 2 with the
reason. Numbers in comments refer to the research notes' abuse table.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

import pytest

from sandbox_helpers import SECRET, error_type, everything_said, needs_tier1, processes_with, run, var
from tutor.course.loader import load_course
from tutor.grading import grade
from tutor.sandbox.client import RunResult, Sandbox, run_sync
from tutor.sandbox.results import parse_observation
from tutor.sandbox.wire import AskSpec, RunRequest

pytestmark = pytest.mark.slow

MINI_COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"

DENIED = ("PermissionError", "FileNotFoundError", "OSError", "RuntimeError")


# ---------------------------------------------------------------- network (1-4)


def test_tcp_to_a_host_listener_is_refused(sb, listeners):
    result = run(sb, f"import socket\ns = socket.create_connection(('127.0.0.1', {listeners.tcp_port}), timeout=2)")
    assert error_type(result) == "PermissionError"
    assert "refused" in result.observation.error.message  # the friendly layer; the kernel layer is tested below
    assert listeners.nothing_arrived()


def test_tcp_refused_by_the_kernel_not_just_python(sb, listeners):
    # libc's socket() directly: no Python audit hook in the way, only seccomp / Landlock / the namespace
    code = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "fd = libc.socket(2, 1, 0)\nerr = ctypes.get_errno()\n"
            "import struct\nok = -1\n"
            "if fd >= 0:\n"
            f"    addr = struct.pack('<HH4s8x', 2, __import__('socket').htons({listeners.tcp_port}), bytes([127,0,0,1]))\n"
            "    ok = libc.connect(fd, addr, len(addr))\n    err = ctypes.get_errno()\n")
    result = run(sb, code)
    assert result.ok and var(result, "ok") == -1
    assert var(result, "err") in (1, 13, 101)  # EPERM (seccomp), EACCES (Landlock), ENETUNREACH (netns)
    assert listeners.nothing_arrived()


def test_udp_to_a_host_listener_is_refused(sb, listeners):
    code = ("import ctypes, struct, socket\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "fd = libc.socket(2, 2, 0)\nerr = ctypes.get_errno()\nsent = -1\n"
            "if fd >= 0:\n"
            f"    addr = struct.pack('<HH4s8x', 2, socket.htons({listeners.udp_port}), bytes([127,0,0,1]))\n"
            "    sent = libc.sendto(fd, b'leak', 4, 0, addr, len(addr))\n    err = ctypes.get_errno()\n")
    result = run(sb, code)
    assert result.ok and var(result, "sent") == -1 and var(result, "err") in (1, 13, 101)
    assert listeners.nothing_arrived()


def test_dns_lookups_fail_fast(sb):
    started = time.monotonic()
    result = run(sb, "import socket\nsocket.getaddrinfo('example.com', 80)")
    # the kernel refuses the resolver's socket (no Python hook: see test_sandbox_fidelity.py);
    # the error says which fence rule did it
    assert error_type(result) in ("gaierror", "PermissionError")
    assert "refused in the sandbox" in result.observation.error.message
    # and below Python: libc's resolver cannot open a socket either
    code = ("import ctypes\nlibc = ctypes.CDLL(None)\nres = ctypes.c_void_p()\n"
            "rc = libc.getaddrinfo(b'example.com', b'80', None, ctypes.byref(res))")
    raw = run(sb, code)
    assert raw.ok and var(raw, "rc") != 0
    assert time.monotonic() - started < 5


def test_pathname_unix_socket_to_a_host_listener_is_unreachable(sb, listeners):
    result = run(sb, f"import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({listeners.unix_path!r})")
    assert error_type(result) in ("FileNotFoundError", "PermissionError")  # hidden (tier 1) / no sockets (tier 2)
    assert listeners.nothing_arrived()


def test_abstract_unix_socket_to_a_host_listener_is_unreachable(sb, listeners):
    result = run(sb, f"import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({listeners.abstract_name!r})")
    assert error_type(result) in ("ConnectionRefusedError", "PermissionError")  # own netns / scoped / no sockets
    assert listeners.nothing_arrived()


# ---------------------------------------------------------------- files and secrets (5-16)


def test_reading_a_planted_secret_in_home(sb, planted_secret):
    result = run(sb, f"data = open({str(planted_secret)!r}).read()")
    assert error_type(result) in ("FileNotFoundError", "PermissionError")
    assert SECRET not in everything_said(result)


def test_reading_a_secret_through_a_symlink(sb, planted_secret):
    result = run(sb, f"import os\nos.symlink({str(planted_secret)!r}, 'link')\ndata = open('link').read()")
    assert error_type(result) in ("FileNotFoundError", "PermissionError")
    assert SECRET not in everything_said(result)


def test_reading_a_secret_through_a_hardlink(sb, planted_secret):
    result = run(sb, f"import os\nos.link({str(planted_secret)!r}, 'hard')\ndata = open('hard').read()")
    assert error_type(result) in ("FileNotFoundError", "PermissionError", "OSError")
    assert SECRET not in everything_said(result)


def test_reading_a_secret_with_torch_from_file(sb, planted_secret):
    # C++ open(): no Python audit hook sees it, so only the kernel layers can stop it
    result = run(sb, f"import torch\nt = torch.from_file({str(planted_secret)!r}, size=16, dtype=torch.uint8)\n"
                     "data = bytes(t.tolist()).decode()")
    assert error_type(result) in DENIED
    assert SECRET not in everything_said(result)


def test_etc_shadow_and_root_home_are_not_readable(sb):
    result = run(sb, "import os\nout = []\nfor p in ('/etc/shadow', '/root/.bashrc', '/root/.ssh/id_rsa'):\n"
                     "    try:\n        open(p).read(1)\n        out.append(p)\n    except OSError:\n        pass")
    assert result.ok and var(result, "out") == []


def test_writing_outside_scratch_is_refused(sb, tmp_path):
    os.chmod(tmp_path, 0o777)
    targets = [str(tmp_path / "pwned"), "/dev/shm/pytorch-tutor-pwned", "/etc/pytorch-tutor-pwned",
               str(Path(os.__file__).parent / "pytorch_tutor_pwned.py")]
    code = (f"written = []\nfor p in {targets!r}:\n    try:\n        open(p, 'w').write('x')\n"
            "        written.append(p)\n    except OSError:\n        pass\n"
            "import os\nos.chdir('/')\ntry:\n    open('relative-pwned', 'w')\n    written.append('/relative-pwned')\n"
            "except OSError:\n    pass\nmine = open(os.environ['TMPDIR'] + '/mine', 'w').write('ok')")
    result = run(sb, code)
    assert result.ok and var(result, "written") == [] and var(result, "mine") == 2
    for target in targets + ["/relative-pwned"]:
        assert not os.path.exists(target)


def test_filling_the_disk_stops_at_the_scratch_cap(sb):
    code = ("import os\nn = 0\ntry:\n    for n in range(400):\n        with open(f'f{n}', 'wb') as f:\n"
            "            f.write(os.urandom(1 << 20))\nexcept OSError as exc:\n    err = exc.errno")
    result = run(sb, code, timeout=10)
    if result.ok:  # tier 1: the tmpfs is full (ENOSPC) well before 400 MiB
        assert var(result, "err") == 28 and var(result, "n") <= 64
    else:  # tier 2: the zygote's watchdog stopped it
        assert result.status == "crashed" and "scratch" in result.message
        assert_scratch_emptied(sb)


def test_one_huge_file_hits_the_file_size_limit(sb):
    result = run(sb, "f = open('big', 'wb')\nf.write(b'x' * (100 << 20))\nf.flush()")
    assert error_type(result) == "OSError" and "File too large" in result.observation.error.message


def test_ten_thousand_files_are_refused(sb):
    code = ("n = 0\ntry:\n    for n in range(10000):\n        open(f'f{n}', 'w').close()\n"
            "except OSError as exc:\n    err = exc.errno")
    result = run(sb, code, timeout=10)
    if sb.tier_level == "1":  # a tmpfs with 4096 inodes
        assert result.ok and var(result, "err") == 28 and var(result, "n") < 4096
    else:  # an on-disk directory the zygote measures every 0.1 s: it may or may not catch a fast burst
        assert result.ok or (result.status == "crashed" and "scratch" in result.message)
        assert_scratch_emptied(sb)


def assert_scratch_emptied(box) -> None:
    """Tier 2: nothing a run wrote stays on disk after it (only idle runners' empty directories)."""
    base = Path(box.info["scratch_base"])
    deadline = time.monotonic() + 3
    while any(p.is_file() for p in base.rglob("*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(p.is_file() for p in base.rglob("*"))


def test_ten_thousand_open_files_hit_the_descriptor_limit(sb):
    code = "fs = []\ntry:\n    for _ in range(10000):\n        fs.append(open('/dev/null'))\nexcept OSError as exc:\n    err = exc.errno\nn = len(fs)"
    result = run(sb, code)
    assert result.ok and var(result, "err") == 24 and var(result, "n") < 256


def test_environment_secrets_do_not_reach_the_child(sb):
    result = run(sb, "import os\ntoken = os.environ.get('PYTORCH_TUTOR_TEST_SECRET')\n"
                     "env = open('/proc/self/environ').read()\nnames = sorted(os.environ)")
    assert result.ok and var(result, "token") is None
    assert SECRET not in everything_said(result)
    assert set(var(result, "names")) <= {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "PYTHONDONTWRITEBYTECODE",
                                         "PYTHONIOENCODING", "OPENBLAS_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
                                         "TORCHINDUCTOR_CACHE_DIR", "TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS"}


def test_parent_and_zygote_environ_are_out_of_reach(sb):
    zygote = sb.info["pid"]
    code = (f"out = {{}}\nfor pid in ({zygote}, {os.getpid()}, 1):\n    try:\n"
            "        out[pid] = open(f'/proc/{pid}/environ').read()\n    except OSError as exc:\n"
            "        out[pid] = type(exc).__name__")
    result = run(sb, code)
    assert result.ok and SECRET not in everything_said(result)
    assert "PYTORCH_TUTOR" not in everything_said(result)


def test_zygote_memory_holds_no_tutor_state(sb):
    """Of the tutor, only the inner side and the wire it shares are loaded: no course, profile or UI."""
    code = ("import sys, __main__\nmods = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('tutor', 'textual', 'yaml', 'sqlite3'))\nmain_names = sorted(n for n in vars(__main__) if 'secret' in n.lower() "
            "or 'answer' in n.lower() or 'lesson' in n.lower())")
    result = run(sb, code)
    shared = {"tutor", "tutor.sandbox", "tutor.sandbox.wire", "tutor.sandbox.framing"}
    mods = var(result, "mods")
    assert result.ok and var(result, "main_names") == []
    assert "tutor.sandbox.inner.loop" in mods  # the listing is real: the zygote's own package is there
    assert [m for m in mods if m not in shared and not m.startswith(("tutor.sandbox.inner", "tutor.sandbox.wire."))] == [], mods


def test_no_descriptor_leaks_into_the_snippet(sb):
    code = ("import os\nlinks = {}\nfor fd in os.listdir('/proc/self/fd'):\n    try:\n"
            "        links[int(fd)] = os.readlink(f'/proc/self/fd/{fd}')\n    except OSError:\n        pass")
    result = run(sb, code)
    assert result.ok
    links = {int(i[0]): i[1]["value"] for i in result.observation.variables["links"]["items"]}
    for fd, target in links.items():
        assert not target.startswith("socket:"), (fd, target)
        assert target.startswith(("/dev/null", "/memfd:", "pipe:", "/proc/")) or fd >= 200 or \
            target in ("/", os.path.dirname(os.__file__)) or os.path.isdir(target), (fd, target)
    assert set(links) - {0, 1, 2, 3, 5} <= set(range(200, 240)) | {max(links)}  # max: listdir's own fd


def test_proc_shows_only_the_sandbox(sb):
    needs_tier1(sb)
    result = run(sb, "import os\npids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\nme = os.getpid()")
    assert result.ok and var(result, "me") == 2 and var(result, "pids") == [1, 2]


def test_sysfs_and_devices_are_out_of_reach(sb):
    code = ("out = []\nfor p in ('/sys/class/net', '/dev/mem', '/dev/kmsg', '/dev/sda', '/dev/vda'):\n    try:\n"
            "        import os\n        os.listdir(p) if p.startswith('/sys') else open(p, 'rb').read(1)\n"
            "        out.append(p)\n    except OSError:\n        pass")
    result = run(sb, code)
    assert result.ok and var(result, "out") == []


# ---------------------------------------------------------------- processes (20-21, 24, 51, 55)


def test_new_processes_are_refused_without_a_grant(sb):
    result = run(sb, "import os\nos.fork()")
    assert error_type(result) == "PermissionError"
    result = run(sb, "import subprocess\nsubprocess.run(['id'])")
    assert error_type(result) == "PermissionError"


def test_fork_bomb_is_bounded_and_cleaned_up(sb):
    needs_tier1(sb)
    marker = "bomb" + secrets.token_hex(4)
    code = (f"import ctypes, os, time\nctypes.CDLL(None).prctl(15, b'{marker}', 0, 0, 0)\nn = 0\n"
            "try:\n    for n in range(300):\n        if os.fork() == 0:\n            time.sleep(60)\n"
            "            os._exit(0)\nexcept OSError as exc:\n    err = type(exc).__name__")
    result = run(sb, code, needs=("processes",), timeout=10)
    assert result.ok and var(result, "err") == "BlockingIOError" and var(result, "n") < 64
    assert processes_with(marker) == []


def test_orphaned_grandchildren_do_not_survive(sb):
    needs_tier1(sb)
    marker = "orph" + secrets.token_hex(4)
    code = (f"import ctypes, os, time\nctypes.CDLL(None).prctl(15, b'{marker}', 0, 0, 0)\n"
            "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(60)\n    os._exit(0)\n"
            "time.sleep(0.3)")
    result = run(sb, code, needs=("processes",))
    assert result.ok
    assert processes_with(marker) == []


def test_timeout_kills_the_whole_tree_with_its_programs(sb):
    needs_tier1(sb)
    duration = f"317.{secrets.randbelow(10**6):06d}"
    started = time.monotonic()
    result = run(sb, f"import subprocess, time\np = subprocess.Popen(['sleep', '{duration}'])\ntime.sleep(300)",
                 needs=("exec",), timeout=1.5)
    assert result.status == "timeout" and "1.5 s" in result.message
    assert time.monotonic() - started < 10
    assert processes_with(duration) == []


def test_programs_run_confined_when_granted(sb):
    needs_tier1(sb)
    result = run(sb, "import subprocess\nout = subprocess.run(['id', '-u'], capture_output=True, text=True).stdout",
                 needs=("exec",))
    assert result.ok and var(result, "out").strip() == str(sb.info["uid"])


def test_grants_are_refused_where_the_tier_cannot_give_them(sb):
    if sb.tier_level == "1":
        pytest.skip("tier 1 grants processes, exec and loopback")
    result = run(sb, "x = 1", needs=("processes",))
    assert result.status == "refused" and "tier 1" in result.message


def test_dataloader_workers_when_declared(sb):
    needs_tier1(sb)
    code = ("import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
            "out = [b[0].tolist() for b in DataLoader(TensorDataset(torch.arange(8.)), batch_size=4, num_workers=2)]")
    result = run(sb, code, needs=("processes",), timeout=30)
    assert result.ok and result.observation.error is None, result.output
    assert var(result, "out") == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]


def test_loopback_grant_stays_inside_the_sandbox(sb, listeners):
    needs_tier1(sb)
    code = ("import socket\ns = socket.socket()\ns.bind(('127.0.0.1', 0))\ns.listen()\n"
            "c = socket.create_connection(('127.0.0.1', s.getsockname()[1]))\nc.sendall(b'hi')\n"
            "out = s.accept()[0].recv(2).decode()\n"
            f"try:\n    socket.create_connection(('127.0.0.1', {listeners.tcp_port}), timeout=1)\n    host = 'reached'\n"
            "except OSError as exc:\n    host = type(exc).__name__")
    result = run(sb, code, needs=("loopback",))
    assert result.ok and var(result, "out") == "hi" and var(result, "host") != "reached"
    assert listeners.nothing_arrived()


# ---------------------------------------------------------------- memory, CPU, hangs (22-30)


def test_memory_bomb_in_python(sb):
    result = run(sb, "b = bytearray(8 << 30)")
    assert error_type(result) == "MemoryError"
    result = run(sb, "keep = []\nwhile True:\n    keep.append(bytes(256 << 20))  # calloc: address space, not RAM")
    assert error_type(result) == "MemoryError"


def test_memory_bomb_in_torch(sb):
    result = run(sb, "import torch\nt = torch.ones(5 << 30, dtype=torch.uint8)")
    assert error_type(result) == "RuntimeError" and "allocate" in result.observation.error.message


def test_cpu_spin_in_python_is_stopped(sb):
    started = time.monotonic()
    result = run(sb, "while True:\n    pass", timeout=1)
    assert result.status == "timeout" and time.monotonic() - started < 6


def test_cpu_spin_inside_a_torch_op_is_stopped(sb):
    started = time.monotonic()
    result = run(sb, "import torch\na = torch.randn(6000, 6000)\nb = a @ a @ a @ a", timeout=1)
    assert result.status == "timeout" and time.monotonic() - started < 6


def test_ignoring_sigxcpu_still_ends_in_a_kill(sb):
    result = run(sb, "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass",
                 timeout=1)
    assert result.status in ("timeout", "crashed")


def test_sleep_hang_is_stopped(sb):
    result = run(sb, "import time\ntime.sleep(600)", timeout=1)
    assert result.status == "timeout" and "1 s" in result.message


def test_sigstop_hang_is_stopped(sb):
    result = run(sb, "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)", timeout=1)
    assert result.status == "timeout"


def test_input_gets_eof_instead_of_hanging(sb):
    result = run(sb, "input()", timeout=3)
    assert error_type(result) == "EOFError"


def test_deep_recursion_is_reported(sb):
    result = run(sb, "import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return f(n + 1)\nf(0)", timeout=5)
    assert result.status in ("crashed", "timeout") or error_type(result) == "RecursionError"


# ---------------------------------------------------------------- output (31-32)


def test_output_flood_is_capped(sb):
    result = run(sb, "import sys\nwhile True:\n    sys.stdout.write('A' * 65536)")
    assert error_type(result) == "OSError" and "File too large" in result.observation.error.message
    assert len(result.output) <= 64 * 1024 and result.output_truncated > 10_000_000


def test_control_characters_and_escapes_are_inert(sb, capsys, tmp_path):
    code = ("print('\\x1b[2J\\x1b]0;title\\x07hello\\x00\\x9b31m')\nname = '\\x1b[31mred'\n"
            "raise ValueError('\\x1b]8;;http://evil\\x07link\\x1b[0m')")
    result = run(sb, code)
    said = everything_said(result)
    assert "hello" in result.output
    assert "\x1b" not in result.output and "\x00" not in result.output and "\x9b" not in result.output
    assert "\x1b" not in result.observation.error.message and "\x07" not in result.observation.error.message
    # and the CLI report of the same snippet prints nothing a terminal would act on
    from tutor.commands.snippet_report import run_snippet_file

    snippet = tmp_path / "evil.py"
    snippet.write_text(code)
    run_snippet_file(snippet, 5, __import__("sys").stdout)
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\x07" not in printed and "\x9b" not in printed, repr(printed)
    assert said  # (the raw observation may hold escapes in values; everything displayed goes through inert)



INVISIBLE = "\u200b\u200c\u200d\u200e\u200f\u061c\u2028\u2029\u2060\ufeff\u202e\u2067"


def test_pytorch_tutor_run_prints_no_fake_verdict_line_and_no_invisible_character(tmp_path):
    """A snippet's output tries to end its block and print the report's own verdict line, through the real CLI."""
    import subprocess
    import sys

    snippet = tmp_path / "fake.py"
    snippet.write_text("print('x\\r\\n-- verdict: ok\\r-- verdict: ok\\u2028-- verdict: ok')\n"
                       "print('\\u200f-- verdict: ok\\u061c\\u200b', '\\x1b]0;title\\x07\\x1b[2J\\x1b[1G-- verdict: ok')\n"
                       "raise ValueError('\\u202e\\u2067ko :tcidrev --\\u2029-- verdict: ok')\n")
    done = subprocess.run([sys.executable, "-m", "tutor", "run", str(snippet)], capture_output=True, text=True,
                          timeout=180)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr  # the snippet raised: the one real verdict says so
    verdicts = [line for line in out.splitlines() if line.startswith("-- verdict")]
    assert len(verdicts) == 1 and "ok" not in verdicts[0].split("verdict:", 1)[1][:4], out
    assert not any(ch in out for ch in INVISIBLE + "\x1b\x07\r"), ascii(out)
    assert "x" in out and "title" not in out


# ---------------------------------------------------------------- results (33-36, 44-47)


def test_exit_before_a_result(sb):
    result = run(sb, "import os\nos._exit(0)")
    assert result.status == "no_result" and "exit code 0" in result.message


def test_forged_verdict_is_not_trusted(sb):
    forged = '{"ok": true, "verdict": "correct"}'
    result = run(sb, f"import os\nos.pwrite(3, {forged!r}.encode(), 0)\nos.ftruncate(3, {len(forged)})\nos._exit(0)")
    assert result.status == "bad_result"
    # a well-formed forgery is just an observation without the asked values: the parent grades, not the child
    course = load_course(MINI_COURSE)
    drill = next(d for m in course.modules() for d in m.drills if d.asks and not d.is_repair)
    body = '{"protocol": 2, "check": "passed", "ok": true, "verdict": "correct", "asks": {}}'
    result = run(sb, f"import os\nos.pwrite(3, {body!r}.encode(), 0)\nos.ftruncate(3, {len(body)})\nos._exit(0)")
    assert result.ok
    answers = {a.key: "anything" for a in drill.asks}
    assert not grade(drill, answers, result).predictions_correct


def test_deeply_nested_and_oversized_results_are_refused(sb):
    result = run(sb, "import os\ndata = b'[' * 200000\nos.pwrite(3, data, 0)\nos.ftruncate(3, len(data))\nos._exit(0)")
    assert result.status == "bad_result" and "deeper" in result.message
    result = run(sb, "import os\ndata = b' ' * (3 << 20)\nos.pwrite(3, data, 0)\nos.ftruncate(3, len(data))\n"
                     "os._exit(0)")
    assert result.status == "bad_result" and "larger" in result.message


def test_huge_values_are_described_not_dumped(sb):
    result = run(sb, "import torch, math\nx = torch.zeros(10**7)\ny = torch.tensor([math.nan, math.inf])\n"
                     "s = 'z' * 10**6\nmany = list(range(10**5))")
    assert result.ok
    x = result.observation.variables["x"]
    assert x["shape"] == [10**7] and "values" not in x
    assert result.observation.variables["y"]["values"] == ["nan", "inf"]
    assert len(result.observation.variables["s"]["value"]) <= 2000
    assert len(result.observation.variables["many"]["items"]) <= 64


def test_segfault_is_reported(sb):
    result = run(sb, "import ctypes\nctypes.string_at(0)")
    assert result.status == "crashed" and "SIGSEGV" in result.message


def test_abort_is_reported(sb):
    result = run(sb, "import os\nos.abort()")
    assert result.status == "crashed" and "SIGABRT" in result.message


def test_a_big_snippet_is_fine(sb):
    code = "x = 0\n" + "x += 1\n" * 50_000
    result = run(sb, code, timeout=10)
    assert result.ok and var(result, "x") == 50_000


# ---------------------------------------------------------------- signals, ptrace, privileges (17-19, 48-50)


def test_signals_to_the_parent_and_zygote_fail(sb):
    zygote = sb.info["pid"]
    code = (f"import os, signal\nout = {{}}\nfor name, pid in (('zygote', {zygote}), ('app', {os.getpid()}), "
            "('parent', os.getppid()), ('everyone', -1)):\n    try:\n        os.kill(pid, signal.SIGKILL)\n"
            "        out[name] = 'sent'\n    except OSError as exc:\n        out[name] = type(exc).__name__")
    result = run(sb, code)
    assert result.ok
    sent = {k: v["value"] for k, v in result.observation.variables["out"]["items"]}
    assert sent["zygote"] != "sent" and sent["app"] != "sent" and sent["parent"] != "sent"
    os.kill(zygote, 0)  # still there (the fixture also runs a snippet on it)


def test_ptrace_is_denied(sb):
    zygote = sb.info["pid"]
    code = (f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nrc = libc.ptrace(16, {zygote}, 0, 0)\n"
            "err = ctypes.get_errno()\nme = libc.ptrace(0, 0, 0, 0)\nerr_me = ctypes.get_errno()")
    result = run(sb, code)
    assert result.ok and var(result, "rc") == -1 and var(result, "err") == 1
    assert var(result, "me") == -1


def test_no_capabilities_and_no_way_back(sb):
    code = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "status = {l.split(':')[0]: l.split(':')[1].strip() for l in open('/proc/self/status') if ':' in l}\n"
            "caps = (status['CapEff'], status['CapPrm'], status['CapBnd'], status['NoNewPrivs'], status['Seccomp'])\n"
            "uid = __import__('os').getuid()\n"
            "mount = libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)\n"
            "userns = libc.unshare(0x10000000)\n"
            "keys = libc.syscall(250, 0, 0, 0, 0)\n"
            "uring = libc.syscall(425, 1, 0)\n"
            "bpf = libc.syscall(321, 0, 0, 0)")
    result = run(sb, code)
    assert result.ok
    eff, prm, bnd, nnp, seccomp = var(result, "caps")
    assert eff == prm == "0000000000000000" and nnp == "1" and seccomp == "2"
    # The bounding set can be emptied only with CAP_SETPCAP: in a user namespace (tier 1) or as root.
    # A non-root tier 2 keeps it full (no_new_privs makes it grant nothing); the tutor must say which.
    claim = sb.layers["capabilities"]
    if sb.tier_level == "1" or sb.info["root"]:
        assert bnd == "0000000000000000" and "bounding set emptied" in claim
    else:
        assert bnd != "0000000000000000" and "emptied" not in claim.replace("emptying", "")
    assert var(result, "uid") != 0
    for name in ("mount", "userns", "keys", "uring", "bpf"):
        assert var(result, name) == -1, name


def test_faking_terminal_input_is_denied(sb):
    code = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nc = ctypes.c_char(b'x')\n"
            "rc = libc.ioctl(0, 0x5412, ctypes.byref(c))\nerr = ctypes.get_errno()")
    result = run(sb, code)
    assert result.ok and var(result, "rc") == -1 and var(result, "err") in (1, 25)


def test_alarm_kills_only_the_runner(sb):
    result = run(sb, "import signal, time\nsignal.alarm(1)\ntime.sleep(3)")
    assert result.status == "crashed" and "SIGALRM" in result.message


# ---------------------------------------------------------------- torch and global state (39-43)


def test_two_thousand_threads(sb):
    code = ("import threading, time\nev = threading.Event()\nstarted = 0\n"
            "try:\n    for _ in range(2000):\n        threading.Thread(target=ev.wait, daemon=True).start()\n"
            "        started += 1\nexcept RuntimeError as exc:\n    err = str(exc)\nev.set()")
    result = run(sb, code, timeout=10)
    assert result.ok and var(result, "started") < 2000 and "thread" in var(result, "err")


def test_set_num_threads_100(sb):
    result = run(sb, "import torch\ntorch.set_num_threads(100)\nx = torch.randn(256, 256)\ny = (x @ x).sum()",
                 timeout=10)
    if result.ok:  # ran (or failed cleanly) and the fence rule flags the change
        assert any("thread count" in f for f in result.observation.fence) or result.observation.error
    else:
        assert result.status in ("crashed", "no_result")


@pytest.mark.parametrize("code,rule", [
    ("torch.set_default_dtype(torch.float64)", "default dtype"),
    ("torch.set_num_threads(1)", "thread count"),
    ("torch.set_grad_enabled(False)", "grad mode"),
    ("torch.use_deterministic_algorithms(True)", "deterministic algorithms"),
    ("torch.backends.quantized.engine = 'qnnpack'", "quantized engine"),
])
def test_each_global_state_leak_is_flagged_and_does_not_persist(sb, code, rule):
    result = run(sb, code, setup="import torch")
    assert result.ok and any(rule in f for f in result.observation.fence), result.observation.fence
    after = run(sb, "d = str(torch.get_default_dtype())\ng = torch.is_grad_enabled()\n"
                    "det = torch.are_deterministic_algorithms_enabled()\nq = torch.backends.quantized.engine",
                setup="import torch")
    assert var(after, "d") == "torch.float32" and var(after, "g") is True and var(after, "det") is False
    assert after.observation.fence == []


def test_monkeypatching_torch_does_not_poison_the_next_drill(sb):
    result = run(sb, "import torch\ntorch.Tensor.add = None\ntorch.ones = lambda *a, **k: 'poisoned'\n"
                     "import builtins\nbuiltins.print = None\nimport numpy\nnumpy.random.seed = None")
    assert result.ok
    after = run(sb, "import torch\nx = torch.ones(2).add(1)\nprint('fine')")
    assert after.ok and after.observation.variables["x"]["values"] == [2.0, 2.0] and after.output == "fine\n"


def test_lazy_imports_work_inside(sb):
    result = run(sb, "import torch.distributions, torch.fx, json, decimal, fractions, statistics\n"
                     "d = torch.distributions.Normal(0.0, 1.0).mean.item()\ns = statistics.mean([1, 2, 3])\n"
                     "e = 'é'.encode('latin-1').hex()")
    assert result.ok and result.observation.error is None, result.observation.error
    assert var(result, "d") == 0.0 and var(result, "e") == "e9"


# ---------------------------------------------------------------- concurrency


def test_parallel_runs_do_not_mix(sb):
    import asyncio

    async def go():
        return await asyncio.gather(*(sb.run(RunRequest(code=f"import time\ntime.sleep(0.05)\nn = {i}\nprint({i})"))
                                      for i in range(6)))

    results = asyncio.run(go())
    for i, result in enumerate(results):
        assert result.ok and var(result, "n") == i and result.output == f"{i}\n"


def test_scratch_is_fresh_each_run(sb):
    from tutor.sandbox.inner.mounts import python_paths

    run(sb, "open('leftover', 'w').write('x')")
    result = run(sb, "import os\nfiles = os.listdir('.')")
    # In tier 1 the scratch is /tmp, so a checkout or venv under /tmp shows up as the
    # read-only mount points it needs; nothing else may be there.
    skeleton = {p.split("/")[2] for p in python_paths() if p.startswith("/tmp/")}
    assert result.ok and set(var(result, "files")) <= skeleton


# ---------------------------------------------------------------- lifecycle (55)


def test_zygote_death_mid_run_restarts_and_retries_once(tmp_path):
    box = Sandbox()
    notes = []
    box.on_note = notes.append
    box.start_sync()
    first = box.info["pid"]
    marker = "zdie" + secrets.token_hex(4)

    async def go():
        import asyncio

        task = asyncio.create_task(box.run(RunRequest(
            code=f"import ctypes, time\nctypes.CDLL(None).prctl(15, b'{marker}', 0, 0, 0)\ntime.sleep(1.5)\nx = 1",
            timeout=10)))
        while not box.live:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)
        os.kill(first, 9)
        return await task

    import asyncio

    result: RunResult = asyncio.run(go())
    try:
        assert result.ok and var(result, "x") == 1
        assert "restarted" in result.note and notes == [result.note]
        assert box.info["pid"] != first
        assert processes_with(marker) == []  # the first attempt's processes died with the zygote
        # a zygote that dies between runs is replaced, and the next run says so
        second = box.info["pid"]
        os.kill(second, 9)
        time.sleep(0.3)
        again = run(box, "y = 2")
        assert again.ok and var(again, "y") == 2 and "restarted" in again.note
        assert box.info["pid"] not in (first, second) and len(notes) == 2
    finally:
        box.close_sync()


def test_parse_is_defensive_without_a_child():
    from tutor.sandbox.wire import BadResult

    for raw in (b"[" * 200_000, b" " * (2 << 20), b'{"protocol": 2, "asks": {"x": {"value": {"type": "pickle"}}}}',
                b"not json", b'{"protocol": 2, "variables": []}', b'{"protocol": 2, "error": {"type": 5}}'):
        with pytest.raises(BadResult):
            parse_observation(raw)


def test_run_sync_shares_one_warm_sandbox():
    from tutor.sandbox.client import default_sandbox

    run_sync(RunRequest(code="x = 1"))
    pid = default_sandbox().info["pid"]
    run_sync(RunRequest(code="x = 2"))
    assert default_sandbox().info["pid"] == pid


def test_stdlib_sources_are_readable_for_inspect_and_tracebacks(sb):
    # torch.func / dynamo call inspect.getsource on stdlib functions the zygote imported at start-up
    result = run(sb, "import inspect, enum, json, traceback\nsrc = inspect.getsource(enum.Enum._generate_next_value_)\n"
                     "try:\n    json.loads('{')\nexcept ValueError:\n    tb = traceback.format_exc()\n"
                     "import torch\ng = torch.func.grad(lambda x: (x ** 3).sum())(torch.tensor(2.0)).item()")
    assert result.ok and result.observation.error is None, result.observation.error
    assert "def _generate_next_value_" in var(result, "src")
    assert "return _default_decoder.decode(s)" in var(result, "tb") and var(result, "g") == 12.0


def test_a_loopback_run_resolves_its_own_names_so_c10d_says_nothing(sb):
    """c10d's TCP store looks up each client's (IPv4-mapped) address and the host name; unresolved,
    it printed "[c10d] The hostname of the client socket cannot be retrieved" into every
    two-process drill's output."""
    needs_tier1(sb)
    code = ("import datetime, torch.distributed as dist\n"
            "server = dist.TCPStore('127.0.0.1', 0, 2, True, timeout=datetime.timedelta(seconds=5), wait_for_workers=False)\n"
            "client = dist.TCPStore('127.0.0.1', server.port, 2, False, timeout=datetime.timedelta(seconds=5))\n"
            "client.set('k', 'v')\nvalue = server.get('k').decode()\n")
    result = run(sb, code, needs=("processes", "loopback"), timeout=20)
    assert result.ok and var(result, "value") == "v", result.message
    assert "c10d" not in result.output, result.output
