"""Progress of the long commands, and Ctrl-C: a real SIGINT at a step, a checkpoint, an exact resume.

The interruption is event-driven: the signal is raised when the progress bar is told that
step 7 finished, never after a sleep; the resumed run must end with the same weights, AdamW
state and RNG states as a run that was never interrupted.
"""

from __future__ import annotations

import io
import json
import signal
from dataclasses import replace

import torch

from capstone.cli import main
from capstone.progress import ProgressBar, ProgressFile, ProgressFollower, StopRequest, duration
from capstone.tiny import TINY_MODEL, TINY_TRAINING, tiny_workspace

TINY = ["--steps", "20", "--context", "32", "--d-model", "32", "--n-layer", "1", "--n-head", "2",
        "--batch-size", "4", "--log-every", "5", "--eval-every", "0", "--checkpoint-every", "0",
        "--dropout", "0.1", "--threads", "1"]


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_the_bar_shows_steps_rate_time_left_and_loss_and_plain_lines_off_a_terminal():
    clock, out = Clock(), io.StringIO()
    bar = ProgressBar("train", 1600, 4096, stream=out, tty=False, clock=clock)
    for step in range(1, 161):
        clock.now += 0.25
        bar.update(step, 3.0 - step / 1000)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2  # one line every 5 % (80 steps) off a terminal
    assert lines[-1].startswith("train  160/1600  [##..................]")
    assert "16.4k tok/s" in lines[-1] and "6m00s left" in lines[-1] and "loss 2.8400" in lines[-1]
    assert "\r" not in out.getvalue()
    assert duration(45) == "45s" and duration(3725) == "1h02m"


def test_on_a_terminal_the_bar_redraws_in_place_and_log_lines_go_above_it():
    clock = Clock()

    class Tty(io.StringIO):
        def isatty(self):
            return True

    out = Tty()
    bar = ProgressBar("finetune", 10, 100, stream=out, clock=clock)
    for step in range(1, 4):
        clock.now += 1.0
        bar.update(step, 1.5)
    bar.log("finetune step 3/10 | loss 1.5000")
    bar.close()
    text = out.getvalue()
    assert text.count("\r\x1b[K") >= 4 and text.endswith("\n")
    assert "\r\x1b[Kfinetune step 3/10 | loss 1.5000\n\r\x1b[Kfinetune  3/10" in text
    assert "7s left" in text


def test_a_run_told_to_stop_early_counts_the_schedule_and_says_where_it_stops():
    clock, out = Clock(), io.StringIO()
    bar = ProgressBar("train", 1600, 4096, first_step=800, stop_at=840, stream=out, tty=False, clock=clock)
    for step in range(801, 841):
        clock.now += 0.25
        bar.update(step, 2.5)
    lines = out.getvalue().splitlines()
    assert len(lines) == 20  # a line every 5 % of *this* run's 40 steps
    assert lines[-1].startswith("train  840/1600 (stopping at 840)  [####################]")
    assert "0s left" in lines[-1]  # the time left is to the stop, not to step 1600
    assert "10s left" in lines[0] and "802/1600 (stopping at 840)" in lines[0]
    plain = ProgressBar("train", 1600, 4096, stop_at=1600, stream=io.StringIO(), tty=False)
    assert "stopping" not in plain.text()  # stopping at the end is no early stop


def test_train_stop_after_shows_the_recipes_steps_and_the_stop(tmp_path, capsys, one_thread):
    ws = tiny_workspace(tmp_path / "ws", train=False)
    assert main(["train", *TINY, "--stop-after", "5", "--workspace", str(ws.root)]) == 0
    captured = capsys.readouterr()
    assert "train  5/20 (stopping at 5)  [####################]" in captured.err
    assert "step 5/20 stopped early" in captured.out


def test_the_tutor_reads_the_sandboxed_runs_progress_as_checked_data(tmp_path):
    path = tmp_path / "progress.jsonl"
    writer = ProgressFile(path, "train", 4, 128, stop_at=3)
    writer.log("new run: \x1b[31mred\x1b[0m")
    writer.update(1, 5.5)
    writer.close()
    with open(path, "ab") as f:  # what hostile code in the run could add
        f.write(b"not json\n" + b"[1, 2]\n" + json.dumps({"step": "2", "loss": 1}).encode() + b"\n"
                + json.dumps({"step": 2, "loss": True}).encode() + b"\n" + b"x" * 10_000 + b"\n"
                + b'{"step": 3, "loss": 4.25')  # an unfinished line waits for the next poll

    shown, bars = [], []
    out = io.StringIO()

    def make_bar(label, total, tps, first, stop_at):
        bars.append(ProgressBar(label, total, tps, first_step=first, stop_at=stop_at, stream=out, tty=False))
        return bars[-1]

    follower = ProgressFollower(lambda offset: path.read_bytes()[offset:], make_bar,
                                lambda text: text.replace("\x1b", "?"), shown.append)
    follower.poll()
    assert len(bars) == 1 and bars[0].total == 4 and bars[0].step == 2 and bars[0].loss is None
    assert bars[0].stop_at == 3
    assert "new run: ?[31mred?[0m" in out.getvalue()
    with open(path, "ab") as f:
        f.write(b"}\n")
    follower.poll()
    assert bars[0].step == 3 and bars[0].loss == 4.25


def test_a_stop_file_stops_the_loop(tmp_path):
    stop = StopRequest(tmp_path / "stop")
    assert stop() is False
    (tmp_path / "stop").write_text("")
    assert stop() is True and stop.requested


def test_ctrl_c_at_a_step_writes_a_checkpoint_and_the_resume_is_bit_identical(tmp_path, capsys, monkeypatch,
                                                                              one_thread):
    straight, stopped = tiny_workspace(tmp_path / "straight", train=False), tiny_workspace(tmp_path / "stopped", train=False)
    assert main(["train", *TINY, "--workspace", str(straight.root)]) == 0
    capsys.readouterr()

    update = ProgressBar.update

    def interrupt_at_step_7(self, step, loss, now=None):
        update(self, step, loss, now)
        if step == 7:
            signal.raise_signal(signal.SIGINT)  # what Ctrl-C sends, at a known step

    monkeypatch.setattr(ProgressBar, "update", interrupt_at_step_7)
    assert main(["train", *TINY, "--workspace", str(stopped.root)]) == 130
    err = capsys.readouterr().err
    assert "stopping after this step" in err
    assert "interrupted at step 7/20" in err and f"train --resume --workspace {stopped.root}" in err
    assert torch.load(stopped.checkpoint, weights_only=True)["step"] == 7
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is put back
    monkeypatch.undo()

    assert main(["train", "--resume", "--threads", "1", "--workspace", str(stopped.root)]) == 0
    assert "step 20/20 finished" in capsys.readouterr().out
    a = torch.load(straight.checkpoint, weights_only=True)
    b = torch.load(stopped.checkpoint, weights_only=True)
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])
    for ga, gb in zip(a["optimizer"]["state"].values(), b["optimizer"]["state"].values()):
        assert all(torch.equal(ga[k], gb[k]) for k in ga)
    assert torch.equal(a["rng"]["torch"], b["rng"]["torch"])


def finetune_state(ws):
    return torch.load(ws.finetune_checkpoint, weights_only=True)


def test_ctrl_c_during_finetune_writes_a_checkpoint_and_the_resume_is_bit_identical(tmp_path, capsys, monkeypatch,
                                                                                    one_thread):
    # dropout 0.1 in the base model: the resume must also restore the RNG the dropout masks come from
    base = dict(model=replace(TINY_MODEL, dropout=0.1), training=replace(TINY_TRAINING, steps=10))
    straight, stopped = tiny_workspace(tmp_path / "straight", **base), tiny_workspace(tmp_path / "stopped", **base)
    tune = ["finetune", "--steps", "8", "--batch-size", "2"]
    assert main([*tune, "--workspace", str(straight.root)]) == 0
    capsys.readouterr()

    update = ProgressBar.update

    def interrupt_at_step_3(self, step, loss, now=None):
        update(self, step, loss, now)
        if step == 3 and self.label == "finetune":
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(ProgressBar, "update", interrupt_at_step_3)
    assert main([*tune, "--workspace", str(stopped.root)]) == 130
    out, err = capsys.readouterr()
    assert "interrupted at step 3/8" in err and f"finetune --resume --workspace {stopped.root}" in err
    assert "fine-tuned 3 of 8 steps" in out and "(the adapter of the steps done)" in out
    assert stopped.adapter.exists() and finetune_state(stopped)["step"] == 3
    monkeypatch.undo()

    assert main(["finetune", "--resume", "--steps", "9", "--workspace", str(stopped.root)]) == 1
    assert "drop --steps" in capsys.readouterr().err  # the saved settings, never new ones
    assert main(["finetune", "--resume", "--workspace", str(stopped.root)]) == 0
    out, err = capsys.readouterr()
    assert "resuming the fine-tune from step 3/8" in err and "fine-tuned 8 steps" in out
    a, b = finetune_state(straight), finetune_state(stopped)
    assert a["lora"].keys() == b["lora"].keys() and all(torch.equal(a["lora"][k], b["lora"][k]) for k in a["lora"])
    for sa, sb in zip(a["optimizer"]["state"].values(), b["optimizer"]["state"].values()):
        assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert torch.equal(a["torch_rng"], b["torch_rng"]) and torch.equal(a["generator"], b["generator"])
    assert json.loads(straight.finetune_report.read_text()) | {"adapter": ""} == \
        json.loads(stopped.finetune_report.read_text()) | {"adapter": ""}


def test_finetune_stop_after_then_resume_and_a_resume_refused_after_train_ran_again(tmp_path, capsys, one_thread):
    ws = tiny_workspace(tmp_path / "ws", training=replace(TINY_TRAINING, steps=10))
    assert main(["finetune", "--steps", "6", "--batch-size", "2", "--stop-after", "2", "--workspace", str(ws.root)]) == 0
    out, err = capsys.readouterr()
    assert "finetune 2/6 (stopping at 2)" in err and "stopped early at step 2/6" in err
    assert main(["finetune", "--resume", "--stop-after", "2", "--workspace", str(ws.root)]) == 0
    assert "finetune 4/6 (stopping at 4)" in capsys.readouterr().err
    assert main(["train", *TINY, "--workspace", str(ws.root)]) == 0  # a new base model
    capsys.readouterr()
    assert main(["finetune", "--resume", "--workspace", str(ws.root)]) == 1
    assert "another pretraining checkpoint (train ran since)" in capsys.readouterr().err
