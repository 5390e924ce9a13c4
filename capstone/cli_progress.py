"""The long commands' progress and Ctrl-C, for `capstone train` and `capstone finetune`.

On the learner's terminal a progress bar (steps, tokens/s, time left, latest loss) with the
stage's log lines printed above it; in the sandbox (`--package mine`) the same events go to a
progress file the tutor reads and draws. Either way the first Ctrl-C (or the tutor's stop file)
ends the loop at a step boundary, so the stage writes its checkpoint before it returns.
Torch-free: the numbers come from the workspace's JSON, never from a checkpoint.
"""

from __future__ import annotations

import argparse
import contextlib

from capstone.progress import ProgressBar, ProgressFile, StepReporter, StopRequest, stop_on_interrupt
from capstone.workspace import Workspace, read_json
from capstone.workspace import log_to_stderr as _err


def add_hidden_options(parser: argparse.ArgumentParser) -> None:
    """What the tutor passes to the command it runs in the sandbox (`--package mine`)."""
    parser.add_argument("--progress-file", help=argparse.SUPPRESS)
    parser.add_argument("--stop-file", help=argparse.SUPPRESS)


@contextlib.contextmanager
def long_run(args: argparse.Namespace, label: str, total: int | None, tokens_per_step: int, first_step: int = 0,
             stop_at: int | None = None):
    """(log, on_step, stop) for a loop of `total` steps (None: unknown, shown without a bar) that this
    invocation ends at `stop_at` (`--stop-after`; None: at `total`)."""
    stop = StopRequest(getattr(args, "stop_file", None))
    if getattr(args, "progress_file", None):
        sink = ProgressFile(args.progress_file, label, total or 0, tokens_per_step, first_step, stop_at)
    else:
        sink = ProgressBar(label, total or 0, tokens_per_step, first_step=first_step, stop_at=stop_at)
    try:
        with stop_on_interrupt(stop, sink.log):
            yield sink.log, StepReporter(sink, stop), stop
    finally:
        sink.close()


def resumed_run(ws: Workspace) -> tuple[int | None, int, int]:
    """(total steps, tokens per step, the step it resumes at) of the workspace's last run, from
    train.json (written at every stop); zeros when there is none (the bar then has no total)."""
    try:
        meta = read_json(ws.train_meta)
        return (int(meta["steps"]), int(meta["train_config"]["batch_size"]) * int(meta["model_config"]["context"]),
                int(meta["step"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None, 0, 0


def resumed_finetune(ws: Workspace) -> tuple[int | None, int, int]:
    """(total steps, tokens per step, the step it resumes at) of the workspace's stopped fine-tune,
    from finetune.json (written at every stop); zeros when there is none."""
    try:
        meta = read_json(ws.finetune_report)
        return (int(meta["total_steps"]), int(meta["config"]["batch_size"]) * int(meta["context"]),
                int(meta["step"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None, 0, 0


def trained_context(ws: Workspace) -> int:
    """The trained model's context (train.json), 0 when unknown: finetune's tokens per step."""
    try:
        return int(read_json(ws.train_meta)["model_config"]["context"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def again(args: argparse.Namespace, command: str, *options: str) -> str:
    """The command line that continues or repeats this one, in the learner's own terms."""
    package = " --package mine" if getattr(args, "package", "reference") == "mine" else ""
    shown = getattr(args, "shown_workspace", None) or args.workspace
    return " ".join(("pytorch-tutor capstone", command, *options)) + f"{package} --workspace {shown}"


def interrupted(args: argparse.Namespace, step: int, steps: int, command: str = "train") -> int:
    """Say how to continue a run the learner stopped; the status of a run that was interrupted."""
    _err(f"interrupted at step {step}/{steps}: a checkpoint was written; continue exactly where it stopped with "
         f"`{again(args, command, '--resume')}`")
    return 130

