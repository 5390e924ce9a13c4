"""Module 37: data-parallel training on the real engine -- DDP and FSDP2 over gloo, on CPU.

Two processes each take half of every batch:

* DDP keeps a full copy of the model per process and all-reduces (averages) the gradients
  after backward, so every copy takes the same step.
* FSDP2 (`fully_shard`) splits every parameter across the processes (each block, then the
  root with the tied embedding/head); a block's full weights are all-gathered just before its
  forward/backward and the gradients reduce-scattered, so each process keeps and steps only
  its shard. The parameters are DTensors; `.full_tensor()` (a collective: every rank calls it)
  gathers them back.

Both must end where single-process training on the whole batch ends: the average of the two
half-batch mean losses is the full-batch mean. Floats are summed in another order, so the
match is to about 1e-7 with SGD and 1e-5 with AdamW (its 1/sqrt(v) normalisation magnifies
tiny differences in early steps).

The mesh is always passed explicitly: `init_device_mesh("cpu", (world,))`. Without it FSDP2
picks the accelerator of the machine, and on a GPU machine a gloo group then segfaults
(pytorch/pytorch#132471).

Run it:

    python -m capstone.distributed --mode fsdp             # spawns 2 local processes
    torchrun --standalone --nproc-per-node 2 -m capstone.distributed --mode ddp

Under torchrun (RANK / WORLD_SIZE / MASTER_ADDR in the environment) it joins the group torchrun
made instead of spawning; rank 0 prints the comparison with single-process training.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from dataclasses import asdict

import torch
import torch.distributed as dist

from capstone.model import GPT, GPTConfig
from capstone.ranks import leave_group, run_ranks  # the launcher (run_ranks is re-exported for callers)

TINY = GPTConfig(vocab_size=512, context=16, d_model=32, n_layer=2, n_head=2)
OPTIMIZERS = {"sgd": lambda params: torch.optim.SGD(params, lr=0.1),
              "adamw": lambda params: torch.optim.AdamW(params, lr=1e-3)}


def batches(config: GPTConfig, steps: int, batch_size: int, seed: int = 0) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The same random token batches in every process."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        window = torch.randint(config.vocab_size, (batch_size, config.context + 1), generator=g)
        out.append((window[:, :-1].contiguous(), window[:, 1:].contiguous()))
    return out


def fresh_model(config: GPTConfig, seed: int = 0) -> GPT:
    torch.manual_seed(seed)  # every rank builds identical initial weights
    return GPT(config)


def train_single(config: GPTConfig, optimizer: str, steps: int, batch_size: int) -> dict[str, torch.Tensor]:
    model = fresh_model(config)
    opt = OPTIMIZERS[optimizer](model.parameters())
    for x, y in batches(config, steps, batch_size):
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def train_parallel(mode: str, config: GPTConfig, optimizer: str, steps: int, batch_size: int,
                   micro_batches: int = 1) -> dict[str, torch.Tensor]:
    """Inside an initialised gloo group: train with DDP or FSDP2, return the full state_dict.

    micro_batches > 1 accumulates each rank's share in that many pieces per step, and syncs
    gradients only on the last one (DDP's `no_sync`, FSDP2's `set_requires_gradient_sync`):
    one all-reduce per step instead of one per piece, and the same step."""
    rank, world = dist.get_rank(), dist.get_world_size()
    if batch_size % world:
        raise ValueError(f"batch {batch_size} does not split over {world} processes")
    model = fresh_model(config)
    if mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        wrapped = DistributedDataParallel(model)
    elif mode == "fsdp":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh("cpu", (world,))  # explicit: never the machine's accelerator
        for block in model.blocks:
            fully_shard(block, mesh=mesh)
        fully_shard(model, mesh=mesh)
        wrapped = model
    else:
        raise ValueError(f"unknown mode {mode!r}")
    opt = OPTIMIZERS[optimizer](model.parameters())  # after fully_shard: it sees the shards
    share = batch_size // world
    if share % micro_batches:
        raise ValueError(f"a share of {share} does not split into {micro_batches} micro-batches")
    piece = share // micro_batches
    for x, y in batches(config, steps, batch_size):
        opt.zero_grad()
        for m in range(micro_batches):
            last = m == micro_batches - 1
            mine = slice(rank * share + m * piece, rank * share + (m + 1) * piece)
            with gradient_sync(wrapped, mode, enabled=last):
                _, loss = wrapped(x[mine], y[mine])
                (loss / micro_batches).backward()  # the mean over the share, not a sum of means
        opt.step()
    state = {}
    for k, v in model.state_dict().items():
        v = v.full_tensor() if hasattr(v, "full_tensor") else v  # collective: on every rank
        state[k] = v.detach().clone()
    return state


@contextlib.contextmanager
def gradient_sync(wrapped, mode: str, enabled: bool):
    """Let this backward communicate gradients (enabled) or keep them local to accumulate."""
    if enabled:
        yield
    elif mode == "ddp":
        with wrapped.no_sync():  # DDP: skip the all-reduce, gradients accumulate in .grad
            yield
    else:
        wrapped.set_requires_gradient_sync(False)  # FSDP2: skip the reduce-scatter
        try:
            yield
        finally:
            wrapped.set_requires_gradient_sync(True)


def compare(mode: str, config: GPTConfig, optimizers, steps: int, batch_size: int,
            micro_batches: int = 1) -> dict[str, float]:
    """In the group: max |param difference| against single-process training, per optimizer
    (and, as `<optimizer>_moved`, the largest change training made to any weight)."""
    diffs = {}
    for name in optimizers:
        parallel = train_parallel(mode, config, name, steps, batch_size, micro_batches)
        if dist.get_rank() == 0:
            single = train_single(config, name, steps, batch_size)
            initial = fresh_model(config).state_dict()
            diffs[name] = max((parallel[k] - single[k]).abs().max().item() for k in single)
            # How far training moved the weights: the scale the difference is small against.
            diffs[name + "_moved"] = max((initial[k] - single[k]).abs().max().item() for k in single)
    return diffs


def _compare_on_rank(rank: int, mode: str, config: dict, optimizers, steps: int, batch_size: int,
                     micro_batches: int) -> dict[str, float]:
    return compare(mode, GPTConfig(**config), optimizers, steps, batch_size, micro_batches)


def run_spawned(mode: str, config: GPTConfig = TINY, optimizers=("sgd", "adamw"), steps: int = 3,
                batch_size: int = 8, world: int = 2, micro_batches: int = 1,
                start_method: str = "spawn") -> dict[str, float]:
    """`world` processes on 127.0.0.1; max |Δparam| vs single-process training per optimizer."""
    return run_ranks(_compare_on_rank, mode, asdict(config), tuple(optimizers), steps, batch_size,
                     micro_batches, world=world, start_method=start_method)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="DDP / FSDP2 on gloo vs single-process training")
    parser.add_argument("--mode", choices=("ddp", "fsdp"), default="ddp")
    parser.add_argument("--optimizer", choices=tuple(OPTIMIZERS) + ("both",), default="both")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--world", type=int, default=2, help="processes to spawn (not under torchrun)")
    args = parser.parse_args(argv)
    optimizers = tuple(OPTIMIZERS) if args.optimizer == "both" else (args.optimizer,)
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # launched by torchrun
        torch.set_num_threads(1)
        dist.init_process_group("gloo")  # env:// -- MASTER_ADDR/PORT from torchrun
        try:
            diffs = compare(args.mode, TINY, optimizers, args.steps, args.batch_size)
            world = dist.get_world_size()
        except BaseException:
            dist.destroy_process_group()
            raise
        leave_group()
        if int(os.environ["RANK"]) != 0:
            return 0
    else:
        diffs, world = run_spawned(args.mode, TINY, optimizers, args.steps, args.batch_size, args.world), args.world
    for name in optimizers:
        print(f"{args.mode} x{world} {name}: max |param - single-process param| = {diffs[name]:.2e} "
              f"after {args.steps} steps (training moved the weights by up to {diffs[name + '_moved']:.2e})")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
