"""Nothing a run of the learner's package leaves in the workspace is trusted on the host (issue 28).

`--package mine` runs the learner's stage files in the sandbox with the capstone workspace
writable; the reference commands then run on the host over the same workspace. Each attack here
goes through the real path: a learner's stage file that, inside the sandbox, plants what an
attacker would (a `.pt2` whose weights unpickle a payload, a pickle where the checkpoint was, a
link out of the workspace, a directory link, a FIFO), then the real `capstone` CLI on the host.
The payloads would create a file outside the workspace: it must never exist. And a profile
import must not plant a stage file that the next `--package mine` run executes.
"""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import zipfile
from pathlib import Path

import pytest
import torch

from capstone.tiny import tiny_workspace
from test_capstone_mine import PROFILE, ROOT, capstone, space, tier1, write_stage  # noqa: F401 (tier1: a fixture)


class Payload:
    """Unpickled, it creates the file `mark`: code running wherever the pickle is loaded."""

    def __init__(self, mark: str):
        self.mark = mark

    def __reduce__(self):
        return (open, (self.mark, "w"))


def hostile_pt2(mark: Path) -> bytes:
    """A real `.pt2` whose first weight is marked `use_pickle` and is the payload: `torch.export.load` runs it."""
    model = torch.nn.Linear(3, 2)
    buffer = io.BytesIO()
    torch.export.save(torch.export.export(model, (torch.zeros(1, 3),)), buffer)
    archive = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    config_name = next(n for n in archive.namelist() if n.endswith("weights/model_weights_config.json"))
    config = json.loads(archive.read(config_name))
    first = next(iter(config["config"].values()))
    first["use_pickle"] = True
    victim = config_name.rsplit("/", 1)[0] + "/" + first["path_name"]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in archive.infolist():
            data = archive.read(info)
            if info.filename == config_name:
                data = json.dumps(config).encode()
            elif info.filename == victim:
                data = pickle.dumps(Payload(str(mark)))
            dst.writestr(info, data)
    return out.getvalue()


def planting_export_stage(plant: str) -> str:
    """The reference export.py, whose `export_workspace` then runs `plant` (in the sandbox, with `root`
    the workspace as the sandbox shows it): what a hostile or careless stage file can do."""
    reference = (ROOT / "capstone" / "export.py").read_text(encoding="utf-8")
    return reference + (
        "\n\n_reference_export_workspace = export_workspace\n\n\n"
        "def export_workspace(workspace, log=None):\n"
        "    import base64, os, shutil\n"
        "    report = _reference_export_workspace(workspace, log)\n"
        "    root = str(workspace.root)\n"
        + "".join(f"    {line}\n" for line in plant.splitlines())
        + "    return report\n")


@pytest.mark.slow
def test_what_a_sandboxed_stage_plants_is_never_loaded_followed_or_written_through(tier1, tmp_path, capsys):
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "precious.txt"
    victim.write_text("not the corpus\n")
    mark = outside / "payload-ran-on-the-host"
    pt2 = hostile_pt2(mark)
    # the crafted file is the real attack: the loader the host used before runs it
    probe = tmp_path / "probe"
    torch_load_probe = hostile_pt2(probe)
    with pytest.raises(Exception):
        torch.export.load(io.BytesIO(torch_load_probe))
    assert probe.exists()

    ws = tiny_workspace(tmp_path / "ws")
    assert capstone("eval", "--stride", "16", "--workspace", str(ws.root)) == 0  # makes eval/, later a link
    tokenizer = ws.tokenizer.read_bytes()
    write_stage("38", "write-the-export", planting_export_stage(
        f"open(os.path.join(root, 'export', 'model.pt2'), 'wb').write(base64.b64decode({base64.b64encode(pt2)!r}))\n"
        "os.remove(os.path.join(root, 'corpus', 'train.txt'))\n"
        f"os.symlink({str(victim)!r}, os.path.join(root, 'corpus', 'train.txt'))\n"
        "os.remove(os.path.join(root, 'tiny_corpus.txt'))\n"
        f"os.symlink({str(victim)!r}, os.path.join(root, 'tiny_corpus.txt'))\n"
        "shutil.rmtree(os.path.join(root, 'eval'))\n"
        f"os.symlink({str(outside)!r}, os.path.join(root, 'eval'))\n"
        "os.remove(os.path.join(root, 'tokenizer', 'tokenizer.json'))\n"
        "os.mkfifo(os.path.join(root, 'tokenizer', 'tokenizer.json'))\n"))
    assert capstone("export", "--package", "mine", "--workspace", str(ws.root)) == 0
    err = capsys.readouterr().err
    assert "export: your 38_write_the_export.py" in err
    # the sandbox really planted them (the host's view of the workspace)
    assert (ws.root / "corpus" / "train.txt").is_symlink() and (ws.root / "eval").is_symlink()
    assert (ws.root / "export" / "model.pt2").read_bytes() == pt2

    # serve: the program comes from the checkpoint (weights_only), the planted .pt2 is never loaded;
    # the tokenizer is a FIFO now: refused at once, not read (which would hang)
    assert capstone("serve", "--terminal", "--source", "export", "--workspace", str(ws.root)) == 1
    out, err = capsys.readouterr()
    assert "tokenizer.json: a special file" in err and "never follow a link or read a special file" in err
    assert "Traceback" not in out + err
    os.remove(ws.tokenizer)  # the test puts the tokenizer back, to reach the other refusals
    ws.tokenizer.write_bytes(tokenizer)
    assert capstone("tokenize", "--vocab-size", "320", "--workspace", str(ws.root)) == 1  # the corpus is a link
    err = capsys.readouterr().err
    assert "train.txt: a link" in err and "Traceback" not in err
    assert not mark.exists()

    # corpus: writing train.txt would have clobbered the link's target
    assert capstone("corpus", "--workspace", str(ws.root)) == 1
    out, err = capsys.readouterr()
    assert "train.txt: a link" in err and "Traceback" not in out + err
    # a corpus kept in the workspace is read without following a link too (it would land in train.txt)
    assert capstone("corpus", "--corpus", str(ws.root / "tiny_corpus.txt"), "--workspace", str(ws.root)) == 1
    out, err = capsys.readouterr()
    assert "tiny_corpus.txt: a link" in err and "Traceback" not in out + err
    assert victim.read_text() == "not the corpus\n"

    # eval: a directory link; eval.json would have gone into `outside`
    assert capstone("eval", "--stride", "16", "--workspace", str(ws.root)) == 1
    out, err = capsys.readouterr()
    assert "eval is a link" in err and "Traceback" not in out + err
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]  # nothing written, no payload run

    # serve runs the program exported again from the checkpoint: the hostile model.pt2 is still there, never loaded
    assert (ws.root / "export" / "model.pt2").read_bytes() == pt2
    assert capstone("serve", "--terminal", "--source", "export", "--tokens", "8", "--workspace", str(ws.root)) == 0
    out, err = capsys.readouterr()
    assert out.strip() and "Traceback" not in out + err
    assert not mark.exists() and sorted(p.name for p in outside.iterdir()) == ["precious.txt"]


@pytest.mark.slow
def test_a_pickle_planted_as_the_checkpoint_is_refused_by_every_reader(tier1, tmp_path, capsys):
    mark = tmp_path / "payload-ran-on-the-host"
    ws = tiny_workspace(tmp_path / "ws")
    write_stage("38", "write-the-export", planting_export_stage(
        f"open(os.path.join(root, 'train', 'ckpt.pt'), 'wb').write(base64.b64decode("
        f"{base64.b64encode(pickle.dumps(Payload(str(mark))))!r}))\n"))
    assert capstone("export", "--package", "mine", "--workspace", str(ws.root)) == 0
    capsys.readouterr()
    for argv in (["sample", "--tokens", "4"], ["serve", "--terminal", "--source", "export"], ["export"],
                 ["eval", "--stride", "16"], ["train", "--resume"]):
        assert capstone(*argv, "--workspace", str(ws.root)) == 1, argv
        out, err = capsys.readouterr()
        assert "ckpt.pt is not a file of tensors and plain values" in err, (argv, err)
        assert "Traceback" not in out + err
    assert not mark.exists()


@pytest.mark.slow
def test_a_profile_import_cannot_plant_a_stage_that_package_mine_runs(tier1, tmp_path, capsys):
    from tutor.cli import main as tutor_main
    from tutor.progress.store import BUILTIN_COURSE_ID
    from tutor.workspace import course_key, ensure_starter
    from tutor.course.loader import load_course
    from tutor.locations import builtin_course_dir

    planted = "planted-by-an-import"
    stage = ((ROOT / "capstone" / "model.py").read_text(encoding="utf-8")
             + f"\nimport os\nopen(os.path.join('/workspace', {planted!r}), 'w').write('ran')\n")
    shared = tmp_path / "shared-progress.json"
    shared.write_text(json.dumps({"format": "pytorch-tutor-profile", "version": 3, "attempts": [], "workspace": [
        {"path": f"courses/{course_key(BUILTIN_COURSE_ID)}/32_build_the_gpt.py", "text": stage}]}))
    assert tutor_main(["--profile", PROFILE, "profile", "import", str(shared)]) == 0
    assert "1 lab workspace file" in capsys.readouterr().out

    ws = tiny_workspace(tmp_path / "ws", train=False)
    tiny = ["--steps", "2", "--context", "32", "--d-model", "32", "--n-layer", "1", "--n-head", "2",
            "--batch-size", "4", "--eval-every", "0", "--threads", "1"]
    assert capstone("train", "--package", "mine", "--workspace", str(ws.root), *tiny) == 0
    err = capsys.readouterr().err
    assert "model: the reference for 32/build-the-gpt (imported, and its lab not opened since)" in err, err
    assert not (ws.root / planted).exists()

    # once the learner opens the lab, the file is theirs: the same run now executes it (in the sandbox)
    module = {m.id: m for m in load_course(builtin_course_dir()).modules()}["32"]
    ensure_starter(space(), "32", module.drill("build-the-gpt"))
    assert capstone("train", "--package", "mine", "--workspace", str(ws.root), *tiny) == 0
    assert "model: your 32_build_the_gpt.py" in capsys.readouterr().err
    assert (ws.root / planted).read_text() == "ran"


@pytest.mark.parametrize("plant", ["file link", "directory link", "fifo"])
def test_the_reference_corpus_refuses_what_is_planted_and_writes_nothing_outside(tmp_path, capsys, plant):
    from capstone.cli import main

    ws, outside = tmp_path / "ws", tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("kept\n")
    (ws / "corpus").mkdir(parents=True)
    if plant == "file link":
        (ws / "corpus" / "train.txt").symlink_to(outside / "precious.txt")
    elif plant == "directory link":
        (ws / "corpus").rmdir()
        (ws / "corpus").symlink_to(outside, target_is_directory=True)
    else:
        os.mkfifo(ws / "corpus" / "corpus.json")
    assert main(["corpus", "--workspace", str(ws)]) == 1
    out, err = capsys.readouterr()
    assert {"file link": "train.txt: a link", "directory link": "corpus is a link",
            "fifo": "corpus.json: a special file"}[plant] in err
    assert "never follow a link or read a special file" in err and "Traceback" not in out + err
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]
    assert (outside / "precious.txt").read_text() == "kept\n"


def test_a_workspace_file_is_replaced_by_a_new_file_never_written_in_place(tmp_path):
    """A hard link planted at a workspace name shares its inode with a file elsewhere: writing
    into the existing file would change both; the new file renamed over the name changes neither."""
    from capstone.safe_files import write_bytes
    from capstone.workspace import Workspace

    ws, elsewhere = Workspace(tmp_path / "ws"), tmp_path / "elsewhere.txt"
    elsewhere.write_text("kept\n")
    ws.train_text.parent.mkdir(parents=True)
    os.link(elsewhere, ws.train_text)
    write_bytes(ws.train_text, b"new corpus\n")
    assert ws.train_text.read_bytes() == b"new corpus\n" and elsewhere.read_text() == "kept\n"
    assert [p.name for p in ws.train_text.parent.iterdir()] == ["train.txt"]  # no temporary left behind
