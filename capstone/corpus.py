"""Stage 1 (module 30): the corpus and a fixed train/validation split.

The default corpus is the Python language reference that ships inside every CPython as
`pydoc_data.topics`: about 0.47 MB of English prose mixed with grammar and code, no download,
PSF licence. Its text changes with every Python minor version, so the metadata records the
Python version next to the sha256: two runs are comparable only if the hashes match.

Any UTF-8 file can replace it (`--corpus PATH`). Nothing is normalised (no newline or
Unicode rewriting): the bytes on disk are the bytes the tokenizer sees, which is what makes
the sha256 meaningful.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path

from capstone import CapstoneError
from capstone.safe_files import in_a_workspace, read_bytes, write_bytes
from capstone.workspace import Workspace, read_json, sha256_bytes, write_json

VAL_FRACTION = 0.1


@dataclass(frozen=True)
class Corpus:
    text: bytes  # UTF-8
    source: str  # "pydoc_data.topics" or the path it was read from
    python_version: str | None  # only for the default corpus, whose text depends on it

    def metadata(self) -> dict:
        meta = {"source": self.source, "bytes": len(self.text), "sha256": sha256_bytes(self.text)}
        if self.python_version is not None:
            meta["python_version"] = self.python_version
        return meta


def load_default() -> Corpus:
    from pydoc_data.topics import topics

    # Sorted keys: dict order is an implementation detail of the generated file; sorted is not.
    text = "\n\n".join(topics[key] for key in sorted(topics))
    return Corpus(text.encode("utf-8"), "pydoc_data.topics", platform.python_version())


def load_file(path: str | Path) -> Corpus:
    path = Path(path)
    try:  # a corpus kept in a workspace is read like the workspace's own files: never through a link
        data = read_bytes(path) if in_a_workspace(path) else path.read_bytes()
    except OSError as e:
        raise CapstoneError(f"cannot read corpus {path}: {e.strerror}") from None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CapstoneError(
            f"corpus {path} is not UTF-8 (byte {e.start}); convert it first, "
            f"e.g. `iconv -t UTF-8 {path}`"
        ) from None
    return Corpus(data, str(path), None)


def split_point(data: bytes, val_fraction: float = VAL_FRACTION) -> int:
    """Where validation starts: the first line start at or after the (1 - val_fraction) mark.

    Splitting at a line start keeps a line from being half in train and half in validation;
    if the tail has no newline we fall back to the nearest UTF-8 character start at or
    before the mark, so the split never cuts a character in two.
    """
    if not 0.0 < val_fraction < 1.0:
        raise CapstoneError(f"--val-fraction must be between 0 and 1, got {val_fraction}")
    mark = int(len(data) * (1.0 - val_fraction))
    newline = data.find(b"\n", max(mark - 1, 0))
    if newline != -1 and newline + 1 < len(data):
        cut = newline + 1
    else:
        cut = mark
        while 0 < cut < len(data) and (data[cut] & 0xC0) == 0x80:  # a continuation byte
            cut -= 1
    if not 0 < cut < len(data):
        raise CapstoneError(f"corpus of {len(data)} bytes is too small to split")
    return cut


def build(workspace: Workspace, corpus_path: str | Path | None = None,
          val_fraction: float = VAL_FRACTION) -> dict:
    """Extract the corpus, split it, write train.txt / val.txt / corpus.json; return the metadata."""
    corpus = load_default() if corpus_path is None else load_file(corpus_path)
    cut = split_point(corpus.text, val_fraction)
    train, val = corpus.text[:cut], corpus.text[cut:]
    meta = corpus.metadata() | {
        "val_fraction": val_fraction,
        "split_at_byte": cut,
        "train": {"bytes": len(train), "sha256": sha256_bytes(train)},
        "val": {"bytes": len(val), "sha256": sha256_bytes(val)},
    }
    write_bytes(workspace.train_text, train)
    write_bytes(workspace.val_text, val)
    write_json(workspace.corpus_meta, meta)
    return meta


def load_split(workspace: Workspace) -> tuple[bytes, bytes, dict]:
    """The train and validation bytes written by `build`, checked against their recorded hashes."""
    workspace.require(workspace.train_text, workspace.val_text, workspace.corpus_meta, made_by="corpus")
    meta = read_json(workspace.corpus_meta)
    train, val = read_bytes(workspace.train_text), read_bytes(workspace.val_text)
    if sha256_bytes(train) != meta["train"]["sha256"] or sha256_bytes(val) != meta["val"]["sha256"]:
        raise CapstoneError(
            f"{workspace.train_text.parent} was edited after `capstone corpus` ran: run it again"
        )
    return train, val, meta
