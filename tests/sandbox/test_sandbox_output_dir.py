"""The ``output-dir`` grant: one host directory a tool's run may write (``inner/output_dir.py``).

``pytorch-tutor capstone --package mine`` runs the learner's package in the sandbox and needs
its artifacts in the capstone workspace. Only a run granted ``output-dir`` sees that directory
(read-write, at ``wire.OUTPUT_TARGET``); every other run, and every lesson, sees nothing of it,
and a lesson cannot ask for the grant.
"""

from __future__ import annotations

import pytest

from tutor.course.parse import SANDBOX_NEEDS
from tutor.sandbox.client import Sandbox, run_sync
from tutor.sandbox.wire import MAX_TIMEOUT, OUTPUT_RUN_TIMEOUT, OUTPUT_TARGET, RunRequest, Tier

pytestmark = pytest.mark.slow  # real sandboxes, like the rest of tests/sandbox

WRITE = f"""
import os
target = os.environ.get("PYTORCH_TUTOR_OUTPUT_DIR", "")
with open(os.path.join({OUTPUT_TARGET!r}, "made-inside.txt"), "w") as f:
    f.write("from the sandbox")
os.makedirs(os.path.join({OUTPUT_TARGET!r}, "train"), exist_ok=True)
seen = "|".join(sorted(os.listdir({OUTPUT_TARGET!r})))
"""
LOOK = f"import os\nsees = os.path.exists({OUTPUT_TARGET!r})\nenv = os.environ.get('PYTORCH_TUTOR_OUTPUT_DIR', '')"


@pytest.fixture(scope="module")
def writing(tmp_path_factory):
    out = tmp_path_factory.mktemp("capstone-workspace")
    (out / "corpus").mkdir()
    (out / "corpus" / "train.txt").write_text("made on the host", encoding="utf-8")
    box = Sandbox(output_dir=out)
    box.start_sync()
    if box.tier_level != Tier.NAMESPACES:
        box.close_sync()
        pytest.skip("only tier 1 mounts an output directory")
    yield box, out
    box.close_sync()


def variables(result, *names):
    assert result.ok, result.message
    obs = result.observation
    assert obs.error is None, obs.error
    return [obs.variables[n].get("value") for n in names]


def test_a_run_granted_output_dir_writes_the_host_directory_and_sees_what_was_there(writing):
    box, out = writing
    target, seen = variables(run_sync(RunRequest(code=WRITE, needs=("output-dir",), timeout=60), box),
                             "target", "seen")
    assert target == OUTPUT_TARGET
    assert seen == "corpus|made-inside.txt|train"
    assert (out / "made-inside.txt").read_text(encoding="utf-8") == "from the sandbox"
    assert (out / "train").is_dir()


def test_a_run_without_the_grant_sees_no_output_directory(writing):
    box, _ = writing
    sees, env = variables(run_sync(RunRequest(code=LOOK, timeout=30), box), "sees", "env")
    assert sees is False and env == ""
    sees, env = variables(run_sync(RunRequest(code=LOOK, needs=("processes",), timeout=30), box), "sees", "env")
    assert sees is False and env == ""


def test_a_sandbox_without_an_output_directory_refuses_the_grant():
    box = Sandbox()
    try:
        result = run_sync(RunRequest(code="x = 1", needs=("output-dir",), timeout=30), box)
        if box.tier_level != Tier.NAMESPACES:
            pytest.skip("tier 2 refuses every grant")
        assert result.status == "refused" and "output directory" in result.message
    finally:
        box.close_sync()


def test_lessons_cannot_ask_for_it_and_only_its_runs_may_be_long():
    assert "output-dir" not in SANDBOX_NEEDS
    RunRequest.from_json(RunRequest(code="", timeout=OUTPUT_RUN_TIMEOUT, needs=("output-dir",)).to_json())
    with pytest.raises(ValueError):
        RunRequest.from_json(RunRequest(code="", timeout=MAX_TIMEOUT + 1).to_json())


def test_as_root_the_host_directory_is_handed_back_to_its_owners_when_the_sandbox_closes(tmp_path):
    import os

    if os.geteuid() != 0:
        pytest.skip("only a root tutor hands the directory to another uid")
    out = tmp_path / "learners-workspace"
    (out / "corpus").mkdir(parents=True)
    (out / "corpus" / "train.txt").write_text("made on the host", encoding="utf-8")
    (out / "theirs.txt").write_text("someone else's", encoding="utf-8")
    os.chown(out, 1234, 1234)  # the learner who ran `sudo pytorch-tutor capstone ... --package mine`
    os.chown(out / "corpus", 1234, 1234)
    os.chown(out / "corpus" / "train.txt", 1234, 1234)
    os.chown(out / "theirs.txt", 4321, 4321)
    box = Sandbox(output_dir=out)
    try:
        box.start_sync()
        if box.tier_level != Tier.NAMESPACES:
            pytest.skip("only tier 1 mounts an output directory")
        outside = tmp_path / "outside.txt"  # a host file the run cannot see, named by a link it makes
        outside.write_text("not the workspace's", encoding="utf-8")
        os.chown(outside, 4321, 4321)
        code = WRITE + (f"open(os.path.join({OUTPUT_TARGET!r}, 'corpus', 'train.txt'), 'a').write(' and inside')\n"
                        f"os.symlink({str(outside)!r}, os.path.join({OUTPUT_TARGET!r}, 'link'))\n"
                        f"os.link(os.path.join({OUTPUT_TARGET!r}, 'made-inside.txt'), os.path.join({OUTPUT_TARGET!r}, 'train', 'again.txt'))\n")
        variables(run_sync(RunRequest(code=code, needs=("output-dir",), timeout=60), box), "seen")
        assert os.lstat(out / "made-inside.txt").st_uid != 1234  # while it runs, the run's uid owns them
    finally:
        box.close_sync()
    owned = {str(p.relative_to(out)): (p.lstat().st_uid, p.lstat().st_gid) for p in [out, *out.rglob("*")]}
    assert owned == {".": (1234, 1234), "corpus": (1234, 1234), "corpus/train.txt": (1234, 1234),
                     "theirs.txt": (4321, 4321), "made-inside.txt": (1234, 1234), "train": (1234, 1234),
                     "train/again.txt": (1234, 1234), "link": (1234, 1234)}  # both names of a file made inside
    assert (outside.lstat().st_uid, outside.lstat().st_gid) == (4321, 4321)  # a link is never followed
    assert (out / "corpus" / "train.txt").read_text(encoding="utf-8") == "made on the host and inside"
