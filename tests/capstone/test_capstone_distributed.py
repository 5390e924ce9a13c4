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


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["ddp", "fsdp"])
def test_accumulating_micro_batches_without_sync_matches_single_process(mode):
    # Two micro-batches per rank, gradients synced on the last only (no_sync /
    # set_requires_gradient_sync): the same step as one process on the whole batch.
    diffs = run_spawned(mode, optimizers=("sgd",), steps=3, batch_size=8, micro_batches=2,
                        start_method="fork")
    assert diffs["sgd"] <= 1e-6 and diffs["sgd_moved"] > 1e-3, diffs


def test_run_ranks_returns_every_rank_result_and_reraises_a_rank_failure():
    import torch
    import torch.distributed as dist

    from capstone.distributed import run_ranks

    def body(rank, scale):
        t = torch.tensor([float(rank + 1)])
        dist.all_reduce(t)  # a real collective over the group
        return {"rank": rank, "sum": t * scale, "world": dist.get_world_size()}

    results = run_ranks(body, 10.0, start_method="fork")
    assert [r["rank"] for r in results] == [0, 1]
    assert all(r["world"] == 2 and torch.equal(r["sum"], torch.tensor([30.0])) for r in results)

    def fails(rank):
        if rank == 1:
            raise ValueError("rank 1 gives up")
        return rank

    with pytest.raises(Exception, match="rank 1 gives up"):
        run_ranks(fails, start_method="fork", timeout=10)
