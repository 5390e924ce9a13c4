import json
import subprocess
import sys
from pathlib import Path

import pytest

from capstone.cli import main
from capstone.corpus import load_default

ROOT = Path(__file__).resolve().parents[2]
STAGES = ("corpus", "tokenize", "train", "eval", "sample")


def test_help_for_every_stage(capsys):
    assert main(["--help"]) == 0
    for stage in STAGES:
        assert main([stage, "--help"]) == 0
        assert "--workspace" in capsys.readouterr().out
    assert main(["no-such-stage"]) == 2


def test_importing_the_cli_does_not_import_torch():
    code = "import sys, capstone.cli; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_python_dash_m_capstone(tmp_path):
    result = subprocess.run([sys.executable, "-m", "capstone", "eval", "--workspace", str(tmp_path / "none")],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "pytorch-tutor capstone corpus" in result.stderr


@pytest.mark.parametrize("stage, earlier", [("tokenize", "corpus"), ("train", "tokenize"),
                                            ("eval", "tokenize"), ("sample", "tokenize")])
def test_missing_artifacts_name_the_command_to_run(tmp_path, capsys, stage, earlier):
    (tmp_path / "ws").mkdir()
    assert main([stage, "--workspace", str(tmp_path / "ws")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert f"run `pytorch-tutor capstone {earlier}" in err


def test_the_stages_in_order_on_a_small_custom_corpus(tmp_path, capsys, one_thread):
    text = tmp_path / "small.txt"
    text.write_bytes(load_default().text[:60_000])
    ws = ["--workspace", str(tmp_path / "ws")]

    assert main(["corpus", "--corpus", str(text), *ws]) == 0
    assert "60,000 bytes" in capsys.readouterr().out
    assert main(["tokenize", "--vocab-size", "300", "--compare-hf", *ws]) == 0
    out, err = capsys.readouterr()
    assert "44 merges" in out and "bytes/token" in out
    assert "HF tokenizers" in out or "skipped --compare-hf" in err

    tiny = ["--context", "32", "--d-model", "32", "--n-layer", "1", "--n-head", "2", "--batch-size", "4",
            "--log-every", "5", "--eval-every", "5"]
    assert main(["train", "--steps", "10", "--stop-after", "5", *tiny, *ws]) == 0
    out, err = capsys.readouterr()
    assert "step 5/10 stopped early" in out and "tok/s" in err
    assert main(["train", "--resume", "--lr", "1e-3", *ws]) == 1
    assert "drop --lr" in capsys.readouterr().err
    assert main(["train", "--resume", *ws]) == 0
    assert "step 10/10 finished" in capsys.readouterr().out

    assert main(["eval", "--stride", "16", *ws]) == 0
    out = capsys.readouterr().out
    assert "bigram" in out and "bits/byte" in out
    report = json.loads((tmp_path / "ws" / "eval" / "eval.json").read_text())
    assert report["data"]["corpus"]["source"] == str(text)

    assert main(["sample", "--prompt", "def ", "--tokens", "8", "--seed", "1", *ws]) == 0
    first = capsys.readouterr().out
    assert first.startswith("def ")
    assert main(["sample", "--prompt", "def ", "--tokens", "8", "--seed", "1", *ws]) == 0
    assert capsys.readouterr().out == first  # same seed, same text


def test_every_option_of_a_config_comes_from_its_dataclass():
    # The parser is built from capstone.config: each option's default and the "(default X)"
    # in its help are the dataclass's, so the two can never disagree.
    import re
    from dataclasses import fields

    from capstone.cli import build_parser
    from capstone.config import (RECIPE_DROPOUT, EvalConfig, GPTConfig, LoRAConfig, SamplingConfig,
                                 TrainConfig)

    stages = build_parser("x")._subparsers._group_actions[0].choices
    configs = {"train": (GPTConfig, TrainConfig), "eval": (EvalConfig,), "quantize": (EvalConfig,),
               "sample": (SamplingConfig,), "serve": (SamplingConfig,), "finetune": (LoRAConfig,)}
    checked = 0
    for stage, classes in configs.items():
        defaults = {f.name: f.default for c in classes for f in fields(c)}
        if stage == "train":
            defaults["dropout"] = RECIPE_DROPOUT
        for action in stages[stage]._actions:
            if action.dest not in defaults:
                continue
            shown = re.search(r"\(default ([^,)]+)\)", action.help).group(1)
            assert float(shown) == defaults[action.dest], (stage, action.dest)
            # train and finetune leave omitted options None (to refuse them with --resume); the rest use the default
            assert action.default == (None if stage in ("train", "finetune") else defaults[action.dest]), (stage, action.dest)
            checked += 1
    assert checked >= 16 + 2 + 2 + 5 + 5 + 7
