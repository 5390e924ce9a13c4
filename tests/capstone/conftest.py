"""Shared fixtures for the capstone tests: one tokenized workspace per session."""

import shutil
import sys
from pathlib import Path

import pytest

# The capstone is a top-level package beside tests/; make it importable however pytest is run.
ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from capstone import corpus, data  # noqa: E402
from capstone.workspace import Workspace  # noqa: E402


@pytest.fixture(scope="session")
def tokenized_workspace(tmp_path_factory) -> Workspace:
    """The default corpus, split and tokenized at vocab 512 (about 1 s). Read-only: tests
    that write must use `fresh_workspace`."""
    ws = Workspace(tmp_path_factory.mktemp("capstone-ws"))
    corpus.build(ws)
    data.build(ws, vocab_size=512)
    return ws


@pytest.fixture
def fresh_workspace(tokenized_workspace, tmp_path) -> Workspace:
    """A private copy of the tokenized workspace, for tests that train or evaluate."""
    ws = Workspace(tmp_path / "ws")
    shutil.copytree(tokenized_workspace.root, ws.root)
    return ws


@pytest.fixture
def one_thread():
    """Train tiny models on one thread. They gain nothing from two, and on a shared 2-core
    machine a 2-thread OpenMP pool can run 10x slower whenever another process holds a core."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def ctrl_c_as_in_a_terminal():
    """Ctrl-C tests raise a real SIGINT; they mean a terminal's, where Python's handler is set.
    A process started in the background of a non-interactive shell inherits SIGINT ignored
    (Python then leaves it ignored), and a run there could never see the Ctrl-C the test sends."""
    import signal

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)
