"""Which files a lab's learner process may not read: dotted names found by path, never imported."""

from __future__ import annotations

import importlib.util
import py_compile

from tutor.sandbox.hidden_modules import hidden_paths
from tutor.sandbox.inner.mounts import split_hidden


def package(tmp_path):
    pkg = tmp_path / "capstone"
    (pkg / "sub").mkdir(parents=True)
    for name in ("__init__.py", "model.py", "config.py", "sub/__init__.py"):
        (pkg / name).write_text("raise SystemExit('imported on the host')\n")
    py_compile.compile(str(pkg / "model.py"), doraise=True)
    return pkg


def test_a_module_is_its_file_and_its_bytecode_whether_the_root_is_the_package_or_holds_it(tmp_path):
    pkg = package(tmp_path)
    wanted = (importlib.util.cache_from_source(str(pkg / "model.py")), str(pkg / "model.py"))
    assert hidden_paths([pkg], ["capstone.model"]) == tuple(sorted(wanted))
    assert hidden_paths([tmp_path], ["capstone.model"]) == tuple(sorted(wanted))
    assert hidden_paths([pkg], ["capstone.sub"]) == (str(pkg / "sub"),)


def test_names_that_are_not_there_or_not_dotted_identifiers_hide_nothing(tmp_path):
    pkg = package(tmp_path)
    assert hidden_paths([pkg], ["capstone.missing", "capstone..model", "capstone./etc", "os.path", "capstone"]) == ()
    assert hidden_paths([pkg / "sub"], ["capstone.model"]) == ()  # outside that root


def test_a_directory_holding_a_hidden_file_stays_listable_and_only_the_file_is_left_out(tmp_path):
    pkg = package(tmp_path)
    readable, listable = split_hidden([str(tmp_path)], [str(pkg / "model.py")])
    assert str(pkg / "model.py") not in readable
    assert {str(pkg / "config.py"), str(pkg / "sub"), str(pkg / "__pycache__")} <= set(readable)
    assert listable == [str(tmp_path), str(pkg)]
    assert split_hidden([str(pkg / "sub")], [str(pkg / "model.py")]) == ([str(pkg / "sub")], [])


def test_a_hidden_file_in_an_installed_package_cuts_up_the_interpreters_directory_too(tmp_path):
    """A wheel puts capstone/ inside site-packages, which the sandbox also shows whole: Landlock's rule on
    site-packages would grant the file again, so the hidden file is named as the host names it too, and
    the interpreter's directory is cut up around it."""
    from tutor.sandbox.inner.tree import Setup, runner_paths
    from tutor.sandbox.wire import Tier

    site = tmp_path / "site-packages"
    pkg = package(site)
    setup = Setup(tier=Tier.LANDLOCK, uid=0, gid=0, root=True,
                  extra_names={str(pkg): "/proc/self/fd/200"})
    names = runner_paths(setup, [str(pkg / "model.py"), "/etc/passwd"])
    assert names == ("/proc/self/fd/200/model.py", str(pkg / "model.py"))
    readable, listable = split_hidden([str(site)], list(names))
    assert str(pkg / "model.py") not in readable and str(pkg / "config.py") in readable
    assert listable == [str(site), str(pkg)]
