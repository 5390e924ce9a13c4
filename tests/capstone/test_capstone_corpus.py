import platform

import pytest

from capstone import CapstoneError
from capstone.corpus import build, load_default, load_file, load_split, split_point
from capstone.workspace import Workspace, read_json, sha256_bytes


def test_default_corpus_is_deterministic_and_described(tmp_path):
    first, second = load_default(), load_default()
    assert first.text == second.text and len(first.text) > 100_000
    first.text.decode("utf-8")
    ws = Workspace(tmp_path)
    meta = build(ws)
    assert meta == read_json(ws.corpus_meta)
    assert meta["source"] == "pydoc_data.topics"
    assert meta["python_version"] == platform.python_version()
    assert meta["sha256"] == sha256_bytes(first.text) and meta["bytes"] == len(first.text)
    train, val, _ = load_split(ws)
    assert train + val == first.text
    assert 0.08 < len(val) / len(first.text) <= 0.1
    assert train.endswith(b"\n")  # the split falls on a line start


def test_split_point_falls_back_to_a_character_boundary():
    text = "é" * 100  # two bytes a character, no newline anywhere
    data = text.encode("utf-8")
    cut = split_point(data, 0.1)
    data[:cut].decode("utf-8")
    data[cut:].decode("utf-8")


def test_custom_corpus_and_user_errors(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes("line one\nline two\n".encode() * 50)
    meta = build(Workspace(tmp_path / "ws"), path)
    assert meta["source"] == str(path) and "python_version" not in meta
    assert load_file(path).text == path.read_bytes()

    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(CapstoneError, match="not UTF-8"):
        load_file(bad)
    with pytest.raises(CapstoneError, match="cannot read"):
        load_file(tmp_path / "missing.txt")
    with pytest.raises(CapstoneError, match="capstone corpus"):
        load_split(Workspace(tmp_path / "empty"))
