"""Where every capstone artifact lives on disk, and the small JSON helpers they share.

One place knows the layout, so a stage never guesses a path and a missing artifact always
produces the same kind of message: which file is missing and which command makes it.
Every file is read and written through `capstone.safe_files` (no link followed, data formats
only, written as a new file renamed into place): a run of the learner's package may have
written anything here.

    <workspace>/corpus/train.txt, val.txt, corpus.json      <- `capstone corpus`
    <workspace>/tokenizer/tokenizer.json                    <- `capstone tokenize`
    <workspace>/data/train.bin, val.bin, data.json          <- `capstone tokenize`
    <workspace>/train/ckpt.pt, train.json                   <- `capstone train`
    <workspace>/eval/eval.json                              <- `capstone eval`
    <workspace>/finetune/lora.pt, ckpt.pt, finetune.json    <- `capstone finetune`
    <workspace>/export/model.pt2, export.json               <- `capstone export`
    <workspace>/quantize/model_int8.pt, quantize.json       <- `capstone quantize`
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from capstone import CapstoneError, safe_files

DEFAULT_WORKSPACE = "capstone-workspace"


def log_to_stderr(line: str) -> None:
    """Progress output: stderr, flushed, so stdout keeps only each command's summary."""
    print(line, file=sys.stderr, flush=True)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with safe_files.reading(path) as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_json(path: Path, obj: dict) -> None:
    # A new file renamed into place, so an interrupted run never leaves half a metadata file behind.
    safe_files.write_bytes(path, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def read_json(path: Path) -> dict:
    return safe_files.read_json(path)



@dataclass(frozen=True)
class Workspace:
    root: Path

    def __init__(self, root: str | os.PathLike = DEFAULT_WORKSPACE):
        object.__setattr__(self, "root", Path(root))
        safe_files.trust_root(root)  # the directory the user named; nothing below it is trusted

    # -- corpus stage
    @property
    def train_text(self) -> Path:
        return self.root / "corpus" / "train.txt"

    @property
    def val_text(self) -> Path:
        return self.root / "corpus" / "val.txt"

    @property
    def corpus_meta(self) -> Path:
        return self.root / "corpus" / "corpus.json"

    # -- tokenize stage
    @property
    def tokenizer(self) -> Path:
        return self.root / "tokenizer" / "tokenizer.json"

    @property
    def train_bin(self) -> Path:
        return self.root / "data" / "train.bin"

    @property
    def val_bin(self) -> Path:
        return self.root / "data" / "val.bin"

    @property
    def data_meta(self) -> Path:
        return self.root / "data" / "data.json"

    # -- train stage
    @property
    def checkpoint(self) -> Path:
        return self.root / "train" / "ckpt.pt"

    @property
    def train_meta(self) -> Path:
        return self.root / "train" / "train.json"

    # -- eval stage
    @property
    def eval_report(self) -> Path:
        return self.root / "eval" / "eval.json"

    # -- finetune stage
    @property
    def adapter(self) -> Path:
        return self.root / "finetune" / "lora.pt"

    @property
    def finetune_checkpoint(self) -> Path:
        return self.root / "finetune" / "ckpt.pt"

    @property
    def finetune_report(self) -> Path:
        return self.root / "finetune" / "finetune.json"

    # -- export stage
    @property
    def exported_program(self) -> Path:
        return self.root / "export" / "model.pt2"

    @property
    def export_report(self) -> Path:
        return self.root / "export" / "export.json"

    # -- quantize stage
    @property
    def int8_model(self) -> Path:
        return self.root / "quantize" / "model_int8.pt"

    @property
    def quantize_report(self) -> Path:
        return self.root / "quantize" / "quantize.json"

    def require(self, *paths: Path, made_by: str) -> None:
        """Fail with a one-line, actionable message if an earlier stage has not run."""
        if not self.root.is_dir():
            raise CapstoneError(f"workspace {self.root} does not exist: start with "
                                f"`pytorch-tutor capstone corpus --workspace {self.root}`")
        for path in paths:
            if not path.exists():
                raise CapstoneError(
                    f"{path} does not exist: run `pytorch-tutor capstone {made_by} "
                    f"--workspace {self.root}` first"
                )
