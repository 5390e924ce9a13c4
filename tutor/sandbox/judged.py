"""A judged run (a repair's or a lab's): two processes, and the verdict from the one the learner's code never ran in.

The trust boundary: a repair's or a lab's code is the learner's, so it may patch anything in its
own process, the check included. Its process therefore runs the setup, the code and the probe,
and exports what they bound as data; a fresh process from the zygote runs the setup again, takes
that data, and runs the check. A lab's learner process also runs without the files of the modules
the lab forbids (its reference: ``hidden_modules.py``), and gets the lab's fixtures as data
(``lab_fixtures.py``). Standard library only (host side, no torch).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Awaitable, Callable

from tutor.sandbox.bindings import calls_learner_code, judged_names
from tutor.sandbox.hidden_modules import hidden_paths
from tutor.sandbox.lab_fixtures import FixtureCache, fixture_data, given_names
from tutor.sandbox.results import RunResult
from tutor.sandbox.wire import MAX_EXPORT, RunRequest

RunPlain = Callable[[RunRequest], Awaitable[RunResult]]


async def run_judged(run_plain: RunPlain, request: RunRequest, read_only, compile_cache: bool,
                     fixtures: FixtureCache, release: Callable[[int], None] = lambda rid: None) -> RunResult:
    """``request`` (judged) as its two halves, through ``run_plain`` (one confined process each).

    Where the check calls the learner's functions or uses its objects (``calls_learner_code``),
    the learner's process stays after its export to answer those calls while the judge runs
    (``inner/remote.py``); ``release`` ends it when no judge will."""
    serve = calls_learner_code(request)
    probes = tuple(replace(t, check="") for t in request.tests)  # the learner's half never sees a check
    given = await fixture_data(run_plain, request, fixtures)
    if isinstance(given, RunResult):
        return given
    # the modules the lab forbids (its reference) are not there for the learner's process to read
    hidden = hidden_paths(read_only, (request.rules or {}).get("forbid_modules") or ())
    learner = await run_plain(replace(request, judged=False, export=True, check="", tests=probes,
                                      rules=None, sources=(), judge_modules=(), compile_cache=compile_cache,
                                      hidden=hidden, fixtures="", given=given,
                                      given_names=given_names(request.fixtures) if given else (), serve=serve))
    try:
        return await _judge(run_plain, request, learner)
    finally:
        release(learner.serving)  # the judge has ended it already, or there was none: then a no-op


async def _judge(run_plain: RunPlain, request: RunRequest, learner: RunResult) -> RunResult:
    obs = learner.observation
    if not learner.ok or obs is None:
        return learner
    obs.check, obs.check_message, obs.check_line = "skipped", "", None  # whatever the learner's process said
    obs.tests, obs.fingerprint = [], ""
    if not request.check.strip() and not request.tests and request.rules is None:
        return learner
    if obs.error is not None and obs.error.phase not in ("code", "probe"):
        return learner
    if obs.error is not None and obs.error.phase == "probe":  # the author's probe failed on this code
        obs.check, obs.check_message = "error", f"the probe raised {obs.error.type}: {obs.error.message}"
        return learner
    if len(learner.exports) > MAX_EXPORT:
        obs.check, obs.check_message = "error", "the code's results are too large to be judged"
        return learner
    code_error = obs.error if obs.error is not None and obs.error.phase == "code" else None
    binds, rebinds = judged_names(request)
    judge = await run_plain(RunRequest(
        code="", setup=request.setup, fixtures=request.fixtures, check=request.check,
        imports=learner.exports.decode("utf-8", "replace"),
        binds=binds, rebinds=rebinds,
        timeout=request.timeout, needs=request.needs, modules=request.judge_modules, tests=request.tests,
        threads=request.threads,
        rules=request.rules, sources=request.sources, probe_errors=dict(obs.probe_errors),
        learner_error=code_error, peer=learner.serving))
    verdict = judge.observation
    if not judge.ok or verdict is None:
        obs.check, obs.check_message = "error", f"the check could not run: {judge.message}"
    elif verdict.error is not None:
        obs.check, obs.check_message = "error", f"the check could not run: {verdict.error.message}"
    else:
        obs.check, obs.check_message, obs.check_line = verdict.check, verdict.check_message, verdict.check_line
        obs.tests, obs.fingerprint = verdict.tests, verdict.fingerprint
        obs.fence = obs.fence + [f"check: {f}" for f in verdict.fence]
    learner.seconds += judge.seconds
    learner.exports = b""
    return learner
