"""Two gloo processes on 127.0.0.1 (spawned, about 10 s each on 2 busy cores)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from capstone.distributed import run_spawned

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["ddp", "fsdp"])
def test_two_process_training_matches_single_process(mode):
    diffs = run_spawned(mode, optimizers=("sgd", "adamw"), steps=3, batch_size=8)
    assert diffs["sgd"] <= 1e-6, diffs  # measured 3.7e-9
    assert diffs["adamw"] <= 1e-4, diffs  # measured 7.6e-7
    # ... and training did move the weights, by far more than that.
    assert diffs["sgd_moved"] > 1e-3 and diffs["adamw_moved"] > 1e-3, diffs


@pytest.mark.slow
def test_the_same_script_runs_under_torchrun():
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    result = subprocess.run([*torchrun, "-m", "capstone.distributed", "--mode", "fsdp", "--optimizer", "sgd"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    line = [ln for ln in result.stdout.splitlines() if ln.startswith("fsdp x2 sgd")]
    assert len(line) == 1, result.stdout
    assert float(line[0].split("= ")[1].split()[0]) <= 1e-6
