"""A pytest plugin: ``pytest --lessons DIR`` collects each drill of a lesson pack as its own test.

Registered under the ``pytest11`` entry point, so an author's CI is ``pytest``: every drill
is an item named ``MODULE/DRILL`` that runs exactly what ``pytorch-tutor check`` runs for
it (the snippet in the sandbox, every claim, every listed wrong answer rejected, a repair's
solution and a lab's starter and reference), and fails with check's own problems. A module
that does not load is one failing item carrying its errors. One sandbox serves the whole
session, started on the first drill that runs (so ``-k`` over one drill stays quick).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

_STATE = pytest.StashKey[dict]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pytorch-tutor")
    group.addoption("--lessons", action="append", default=[], type=Path, metavar="DIR",
                    help="collect every drill of this course directory or module file as a test (repeatable)")
    group.addoption("--trust-lessons", action="store_true",
                    help="run the lessons even where the sandbox cannot confine third-party code")
    group.addoption("--allow-grants", action="store_true",
                    help="accept what the lessons ask the sandbox for (processes, exec, loopback); "
                         "without it a pack that asks for any is refused (they are listed either way)")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_STATE] = {"loop": None, "sandbox": None}
    config.addinivalue_line("markers", "slow: runs real sandboxed snippets (every drill of --lessons)")


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect: they must see the drills
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    paths = config.getoption("lessons")
    if not paths:
        return
    from tutor.locations import builtin_course_dir
    from tutor.sandbox.client import third_party_refusal

    refusal = third_party_refusal(list(paths), builtin_course_dir(), config.getoption("trust_lessons"))
    if refusal:
        raise pytest.UsageError(refusal)
    _consent_to_grants(config, paths)
    for path in paths:
        items.extend(LessonPack.from_parent(session, name=str(path), path=Path(path).resolve()).collect())


def _consent_to_grants(config: pytest.Config, paths: list[Path]) -> None:
    """List what the drills ask the sandbox for; refuse a pack's grants unless ``--allow-grants`` says yes.

    The app's rule (``startup.grants_refusal``) with no one to ask: pytest owns the terminal.
    """
    from tutor.commands.authoring import load_targets, third_party_grants_refusal
    from tutor.course import grants

    targets = load_targets(list(paths))
    wanted = grants.requested(m for t in targets for m in t.modules)
    if wanted:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("pytorch-tutor: grants requested by the lessons:\n" + grants.describe(wanted))
    refusal = third_party_grants_refusal(targets, config.getoption("allow_grants"), None)
    if refusal:
        raise pytest.UsageError(refusal)


class LessonPack(pytest.Collector):
    def collect(self) -> list[pytest.Item]:
        from tutor.commands.authoring import load_targets

        items: list[pytest.Item] = []
        for target in load_targets([self.path]):
            if target.errors:
                items.append(BrokenLessons.from_parent(self, name=f"{target.label}::load",
                                                       errors=[str(e) for e in target.errors]))
            for module in target.modules:
                for drill in module.drills:
                    items.append(DrillItem.from_parent(self, name=f"{module.id}/{drill.id}", module=module,
                                                       drill=drill, root=target.course.root if target.course
                                                       else Path(target.label).parent))
        return items


class LessonFailure(Exception):
    """What check found wrong with a drill (or a lesson file), one problem per line."""


class _LessonItem(pytest.Item):
    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, LessonFailure):
            return f"{self.name}:\n" + str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, self.name


class BrokenLessons(_LessonItem):
    def __init__(self, *, errors: list[str], **kwargs) -> None:
        super().__init__(**kwargs)
        self.errors = errors

    def runtest(self) -> None:
        raise LessonFailure("\n".join(self.errors))


class DrillItem(_LessonItem):
    def __init__(self, *, module, drill, root: Path, **kwargs) -> None:
        super().__init__(**kwargs)
        self.module, self.drill, self.root = module, drill, root
        self.add_marker(pytest.mark.slow)

    def runtest(self) -> None:
        from tutor.commands.drill_proof import check_drill

        loop, sandbox = _sandbox(self.config, self.root)
        report = loop.run_until_complete(check_drill(self.module, self.drill, sandbox))
        if not report.ok:
            raise LessonFailure("\n".join(f"  {p}" for p in report.problems))


def _sandbox(config: pytest.Config, root: Path):
    """The session's event loop and sandbox, started on first use."""
    from tutor.course import grants
    from tutor.sandbox.client import Sandbox

    state = config.stash[_STATE]
    if state["sandbox"] is None:
        state["loop"] = asyncio.new_event_loop()
        state["sandbox"] = Sandbox(read_only=grants.code_dirs(root))
    return state["loop"], state["sandbox"]


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state and state["sandbox"] is not None:
        state["loop"].run_until_complete(state["sandbox"].close())
        state["loop"].close()
