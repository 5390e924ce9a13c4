"""The parsed-module cache: same course as a fresh parse, keyed by content, never trusted when damaged."""

from __future__ import annotations

import hashlib
import hmac
import stat
import subprocess
import sys
import json
import os
import pickle
from pathlib import Path

import pytest

from tutor.course import cache as parse_cache
from tutor.course import loader
from tutor.course.loader import load_course, load_module_file
from tutor.locations import builtin_course_dir, cache_dir

BROKEN = 'format_version: 1\nmodule: "01"\ndrills:\n  - id: d1\n    prompt: p\n    colde: x = 1\n'


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """These tests count entries: a cache of their own, not the session's shared one."""
    monkeypatch.setenv("PYTORCH_TUTOR_CACHE", str(tmp_path / "cache"))


def entries() -> list[Path]:
    return sorted((cache_dir() / "parsed-modules").glob("*.json"))


def forbid_parsing(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("parsed again although the cache holds this file")

    monkeypatch.setattr(loader, "parse_module", refuse)
    monkeypatch.setattr(loader, "load_yaml", refuse)  # course.yaml's listing is cached too: no YAML read at all


def test_the_cached_course_equals_a_fresh_parse(monkeypatch):
    fresh = load_course(builtin_course_dir())
    assert len(entries()) == len(fresh.modules()) + 1 >= 39  # every module file, and what course.yaml lists
    forbid_parsing(monkeypatch)
    cached = load_course(builtin_course_dir())
    assert cached.modules() == fresh.modules()
    assert [type(d) for m in cached.modules() for d in m.drills] == [type(d) for m in fresh.modules() for d in m.drills]
    assert cached.all_errors() == fresh.all_errors() == []


def test_errors_are_cached_with_their_positions(tmp_path, monkeypatch):
    path = tmp_path / "m.yaml"
    path.write_text(BROKEN)
    module, errors = load_module_file(path)
    assert module is None and errors
    forbid_parsing(monkeypatch)
    assert load_module_file(path) == (None, errors)
    assert (errors[0].line, errors[0].column) != (1, 1)


def test_an_edited_file_is_parsed_again(tmp_path, monkeypatch):
    path = tmp_path / "m.yaml"
    path.write_text(BROKEN)
    load_module_file(path)
    path.write_text(BROKEN.replace("colde", "code"))
    parsed = []
    real = loader.parse_module
    monkeypatch.setattr(loader, "parse_module", lambda *a: parsed.append(a) or real(*a))
    load_module_file(path)
    assert len(parsed) == 1


def test_the_name_shown_in_errors_is_part_of_the_key(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(BROKEN)
    _, as_a = load_module_file(path, "a.yaml")
    _, as_b = load_module_file(path, "b.yaml")
    assert {e.file for e in as_a} == {"a.yaml"} and {e.file for e in as_b} == {"b.yaml"}


def damage_truncate(raw: bytes) -> bytes:
    return raw[: len(raw) // 2]


def damage_flip(raw: bytes) -> bytes:  # still valid JSON, a different value: the checksum notices
    header, _, payload = raw.partition(b"\n")
    return header + b"\n" + payload.replace(b"shape", b"shapf", 1)


class RunsACommand:
    """Pickles as a call of os.system: what a forged entry would hold to run code on load."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def forged(raw: bytes, value) -> bytes:
    """An entry consistent in every check but the classes it names (sealed with this install's own secret)."""
    payload = pickle.dumps(value, protocol=5)
    header, _, _ = raw.partition(b"\n")
    key = json.loads(header)["key"]
    return json.dumps({"key": key, "hmac": parse_cache._seal(key, payload)}).encode() + b"\n" + payload


def damage_foreign_class(raw: bytes) -> bytes:
    return forged(raw, [RunsACommand(Path(os.environ["FORGED_MARKER"])), []])


def damage_garbage(raw: bytes) -> bytes:
    return b"\x00\xff not a cache entry"


@pytest.mark.parametrize("damage", [damage_truncate, damage_flip, damage_foreign_class, damage_garbage])
def test_a_damaged_entry_is_ignored_and_rebuilt(tmp_path, damage, monkeypatch):
    marker = tmp_path / "the forged entry ran a command"
    monkeypatch.setenv("FORGED_MARKER", str(marker))
    path = tmp_path / "m.yaml"
    path.write_text((builtin_course_dir() / "01_eager_mental_model.yaml").read_text())
    expected = load_module_file(path)
    (entry,) = entries()
    entry.write_bytes(damage(entry.read_bytes()))
    parsed = []
    real = loader.parse_module
    monkeypatch.setattr(loader, "parse_module", lambda *a: parsed.append(a) or real(*a))
    assert load_module_file(path) == expected
    assert len(parsed) == 1
    assert parse_cache.lookup(entry.stem) == expected  # rewritten whole
    assert not marker.exists()


def test_the_codec_names_only_the_course_classes(tmp_path):
    marker = tmp_path / "ran"
    with pytest.raises(pickle.UnpicklingError, match="posix.system|os.system"):
        parse_cache.decode(pickle.dumps(RunsACommand(marker)))
    assert not marker.exists()
    with pytest.raises(pickle.UnpicklingError):
        parse_cache.decode(pickle.dumps(Path("/etc")))
    for foreign in (Path("/etc"), RunsACommand(marker), print, type):  # plain values (sets, bytes) are data: kept
        with pytest.raises(TypeError):
            parse_cache.encode([foreign])
    module = load_course(builtin_course_dir()).modules()[0]
    assert parse_cache.decode(parse_cache.encode([module, (1, "x"), {"k": None}])) == [module, (1, "x"), {"k": None}]


def test_an_unwritable_cache_only_costs_time(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("PYTORCH_TUTOR_CACHE", str(blocker))
    path = tmp_path / "m.yaml"
    path.write_text(BROKEN)
    module, errors = load_module_file(path)
    assert module is None and errors


def test_old_entries_are_pruned(tmp_path, monkeypatch):
    monkeypatch.setattr(parse_cache, "MAX_ENTRIES", 3)
    for i in range(6):
        path = tmp_path / f"m{i}.yaml"
        path.write_text(BROKEN + f"# {i}\n")
        load_module_file(path)
    assert len(entries()) == 3


def test_an_entry_forged_without_the_install_secret_cannot_rewrite_the_built_in_course(tmp_path):
    """Whoever can write the cache directory (but not read the user's files) forges an entry for module 01."""
    def progress() -> str:
        done = subprocess.run([sys.executable, "-m", "tutor", "progress"], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "PYTORCH_TUTOR_CACHE": str(tmp_path / "cache")})
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    real_title = "Installing PyTorch and the Eager Mental Model"  # module 01's, from course.yaml's listing
    assert real_title in progress()  # the launch filled the cache
    secret = tmp_path / "cache" / "cache.key"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and len(secret.read_bytes()) == 32
    forged_title = ("FORGED by whoever can write the cache directory" + "!" * 80)[:len(real_title)]
    forged = {}
    for entry in entries():
        header, _, payload = entry.read_bytes().partition(b"\n")
        if real_title.encode() in payload:  # same length: still a valid pickle
            forged[entry] = (json.loads(header)["key"], payload.replace(real_title.encode(), forged_title.encode()))
    assert forged

    def plant(seal) -> None:
        for entry, (key, payload) in forged.items():
            entry.write_bytes(json.dumps({"key": key, **seal(key, payload)}).encode() + b"\n" + payload)

    def sealed(secret_bytes: bytes):
        return lambda key, payload: {"hmac": hmac.new(secret_bytes, key.encode() + b"\0" + payload,
                                                      hashlib.sha256).hexdigest()}

    for seal in (sealed(b"\0" * 32), lambda key, payload: {"sha256": hashlib.sha256(payload).hexdigest()}):
        plant(seal)
        shown = progress()
        assert forged_title not in shown and real_title in shown
    plant(sealed(secret.read_bytes()))  # the control: sealed with this install's secret, it would be believed
    assert forged_title in progress()
