"""Capstone II's commands end to end on a tiny checkpoint: finetune, export, quantize, serve."""

import json

import pytest

from capstone.cli import main

NEW = ("finetune", "export", "quantize", "serve")
TINY = ["--context", "32", "--d-model", "32", "--n-layer", "1", "--n-head", "2", "--dropout", "0"]


def test_help_for_the_new_commands(capsys):
    for stage in NEW:
        assert main([stage, "--help"]) == 0
        assert "--workspace" in capsys.readouterr().out


@pytest.mark.parametrize("stage, earlier", [("finetune", "train"), ("export", "train"),
                                            ("quantize", "train"), ("serve", "export")])
def test_missing_artifacts_name_the_command_to_run(tokenized_workspace, capsys, stage, earlier):
    assert main([stage, "--workspace", str(tokenized_workspace.root)]) == 1
    assert f"pytorch-tutor capstone {earlier}" in capsys.readouterr().err


@pytest.mark.slow
def test_finetune_export_quantize_serve(fresh_workspace, capsys):
    ws = ["--workspace", str(fresh_workspace.root)]
    assert main(["train", "--steps", "4", "--batch-size", "4", "--log-every", "100", "--eval-every", "0",
                 *TINY, *ws]) == 0
    capsys.readouterr()

    assert main(["finetune", "--steps", "4", "--batch-size", "4", *ws]) == 0
    out = capsys.readouterr().out
    assert "trainable parameters, base frozen" in out and "nats/token" in out
    assert (fresh_workspace.root / "finetune" / "lora.pt").exists()

    assert main(["export", *ws]) == 0
    report = json.loads((fresh_workspace.root / "export" / "export.json").read_text())
    assert report["max_abs_diff_vs_eager"] <= 1e-4
    capsys.readouterr()

    assert main(["quantize", "--stride", "32", *ws]) == 0
    out = capsys.readouterr().out
    assert "x smaller" in out
    report = json.loads((fresh_workspace.root / "quantize" / "quantize.json").read_text())
    assert abs(report["val_nats_difference"]) < 0.05 and report["ratio"] > 1

    for source in ("int8", "export"):
        assert main(["serve", "--source", source, "--terminal", "--prompt", "def ", "--tokens", "6",
                     "--temperature", "0", *ws]) == 0
        assert capsys.readouterr().out.startswith("def ")

    assert main(["sample", "--prompt", "def ", "--tokens", "6", "--temperature", "0", *ws]) == 0
    cached = capsys.readouterr().out
    assert main(["sample", "--prompt", "def ", "--tokens", "6", "--temperature", "0", "--no-cache", *ws]) == 0
    assert capsys.readouterr().out == cached
