"""A drill with variants is predicted on instances the learner has not seen answered (issue 29 §1–2):
the open instance is kept, a wrong answer leaves it answered so the next prediction is of a fresh one,
the verdict rests on that, every recorded prediction names its instance and seed, a review and a
test-out draw fresh instances, and a verified drill revisited shows the instance that verified it.
Through the real tutoring service; the sandbox is a fake that computes what the drill's code would."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.unit.test_tutoring_service import observed
from tutor.course.loader import load_course
from tutor.course.variants import instance_text
from tutor.placement import draw
from tutor.progress.review import Rating
from tutor.progress.store import ATTEMPT_NOTE, AttemptKind, ProfileStore
from tutor.progress.transfer import export_profile, import_profile
from tutor.sandbox.wire import RunRequest
from tutor.session import Session
from tutor.tutoring.service import TutoringService
from tutor.tutoring.states import Outcome

COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "variant_course"


@dataclass
class SumSandbox:
    """Observes `y.numel()` for the rendered code, as torch would: a sum over dim d leaves the other size."""

    requests: list[RunRequest] = field(default_factory=list)

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def run(self, request: RunRequest):
        self.requests.append(request)
        if "ones(3).sum()" in request.code:  # the course's other drills: what they observe is fixed
            return observed({"s.item()": {"type": "float", "value": 3.0}})
        if (plus := re.fullmatch(r"v = (\d+) \+ (\d+)\s*", request.code)) is not None:
            return observed({"v": {"type": "int", "value": int(plus[1]) + int(plus[2])}})
        rows, cols = map(int, re.search(r"zeros\((\d+), (\d+)\)", request.code).groups())
        dim = int(re.search(r"dim=(\d)", request.code).group(1))
        return observed({"y.numel()": {"type": "int", "value": cols if dim == 0 else rows}})


def right_answer(drill) -> str:
    values = dict(drill.instance)
    return str(values["cols"] if values["dim"] == 0 else values["rows"])


@pytest.fixture
def clock():
    return [datetime.now(timezone.utc)]


@pytest.fixture
def session(tmp_path, clock):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    course = load_course(COURSE)
    assert not course.all_errors(), course.all_errors()
    yield Session(course, store, clock=lambda: clock[0])
    store.close()


def base(session):
    return session.module("01").drill("sum-count")


async def predict(service, drill, text, shown=None):
    said = service.read_answers(drill, {drill.asks[0].key: text})
    return await service.submit_prediction("01", drill, said, 5.0, shown=shown)


def notes(session):
    return [a.verdict[ATTEMPT_NOTE] for a in session.store.attempts() if a.kind == AttemptKind.PREDICTION]


async def test_a_wrong_answer_is_followed_by_a_fresh_instance_and_only_that_one_verifies(session):
    sandbox = SumSandbox()
    service = TutoringService(session, sandbox)
    first = service.present("01", base(session))
    assert first.instance is not None and service.present("01", base(session)).instance == first.instance  # kept
    assert f"{dict(first.instance)['rows']}×{dict(first.instance)['cols']}" in first.prompt  # rendered for it

    wrong = await predict(service, first, str(int(right_answer(first)) + 100))
    assert wrong.outcome == Outcome.NOT_YET
    shown = wrong.rows[0].observed  # what the screen now shows for this instance
    assert service.instance_already_answered("01", first)
    again = await predict(service, first, shown)  # re-typing the observation: nothing runs, nothing verifies
    assert again.outcome == Outcome.FRESH_INSTANCE and "fresh instance" in again.not_recorded
    assert len(sandbox.requests) == 1 and not session.drill_done("01", first.id)

    reopened = service.present("01", base(session))  # leaving and coming back gives a fresh instance too
    assert reopened.instance != first.instance
    fresh = service.fresh_instance("01", reopened)
    assert fresh.instance not in (first.instance, reopened.instance)
    assert service.draft_answers("01", fresh) == {}  # nothing typed for another instance follows it
    right = await predict(service, fresh, right_answer(fresh))
    assert right.outcome == Outcome.VERIFIED and session.drill_done("01", fresh.id)

    recorded = notes(session)
    assert [n["instance"] for n in recorded] == [instance_text(first.instance), instance_text(fresh.instance)]
    assert all(isinstance(n["seed"], int) for n in recorded) and recorded[1]["first_try"] is False
    # revisited, not due: the instance that verified it, beside its answers
    assert service.present("01", base(session)).instance == fresh.instance


async def test_the_first_right_prediction_verifies_and_a_review_opens_an_instance_never_answered(session, clock):
    service = TutoringService(session, SumSandbox())
    drill = service.present("01", base(session))
    assert (await predict(service, drill, right_answer(drill))).outcome == Outcome.VERIFIED
    session.review.review("01", drill.id, "drill", Rating.Again)
    clock[0] += timedelta(days=3)
    assert service.in_review("01", drill)
    due = service.present("01", base(session))
    assert due.instance != drill.instance  # the verified instance's answers were on the screen
    # Enter on the empty boxes a review opens with runs nothing; the answer that verified the old one is no recall
    assert (await predict(service, due, "", shown={"y.numel()": ""})).outcome == Outcome.RECALL_NEEDED
    report = await predict(service, due, right_answer(due), shown={"y.numel()": ""})
    assert report.outcome == Outcome.VERIFIED and report.recorded.reviewed
    assert notes(session)[-1]["review"] is True and notes(session)[-1]["instance"] == instance_text(due.instance)


def test_a_drill_without_variants_is_presented_as_it_is(session):
    service = TutoringService(session, SumSandbox())
    drill = session.module("01").drill("plain")
    assert service.present("01", drill) is drill and not service.instance_already_answered("01", drill)


def test_test_out_asks_fresh_instances(session):
    modules = [session.module("01")]
    drawn = [q for seed in ("a", "b", "c", "d") for q in draw(modules, set(), seed) if q.drill is not None]
    variant = [q for q in drawn if q.drill.id == "sum-count"]
    assert variant and all(q.drill.instance is not None and q.asks == q.drill.asks for q in variant)
    assert len({q.drill.instance for q in variant}) > 1  # each placement draws its own


async def test_the_instance_travels_with_a_profile_export(session, tmp_path):
    service = TutoringService(session, SumSandbox())
    drill = service.present("01", base(session))
    await predict(service, drill, right_answer(drill))
    export_profile(session.store, tmp_path / "me.json")
    other = ProfileStore.open(tmp_path / "other.sqlite", course=session.course.id)
    try:
        import_profile(other, tmp_path / "me.json")
        [attempt] = [a for a in other.attempts() if a.kind == AttemptKind.PREDICTION]
        assert attempt.verdict[ATTEMPT_NOTE]["instance"] == instance_text(drill.instance)
    finally:
        other.close()


class Learner:
    """stdin for plain mode: answers each prompt from what the screen (``out``) shows at that moment."""

    def __init__(self, out, script):
        self.out, self.script = out, list(script)

    def readline(self) -> str:
        if not self.script:
            return ""
        step = self.script.pop(0)
        return (step(self.out.getvalue()) if callable(step) else step) + "\n"


def right_for_screen(screen: str) -> str:
    """The right y.numel() for the last instance the screen showed."""
    rows, cols, dim = re.findall(r"a (\d+)×(\d+) tensor of zeros and `?y = x.sum\(dim=(\d)\)", screen)[-1]
    return cols if dim == "0" else rows


def test_plain_mode_follows_a_wrong_answer_with_a_fresh_instance_that_verifies(session):
    import io

    from tutor.plain.plain_tutor import run_plain

    out = io.StringIO()
    script = ["01", "999", "", right_for_screen, "", ":quit"]
    assert run_plain(session, "default", Learner(out, script), out, SumSandbox()) == 0
    text = out.getvalue()
    first, _, after = text.partition("Not yet ✗ — a fresh instance follows")
    assert after and "A fresh instance of this drill (its shapes or values differ): predict it." in after
    shown = re.findall(r"a (\d+×\d+) tensor of zeros and `?y = x.sum\(dim=(\d)\)", text)
    assert len(shown) >= 2 and shown[-1] != shown[0]
    assert "Verified ✓ right." in after and session.drill_done("01", "sum-count")
    assert [n["instance"] for n in notes(session)][0] != [n["instance"] for n in notes(session)][1]


async def test_every_third_finished_drill_is_followed_by_a_weak_spot_practice(session):
    service = TutoringService(session, SumSandbox())
    drill = service.present("01", base(session))
    misread = drill.wrong_answers[0].answer  # the misconception's answer, for this instance: the summed dim survives
    report = await predict(service, drill, misread)
    assert report.outcome == Outcome.NOT_YET and report.rows[0].misconception
    steps = [("01", "plain", "3.0"), ("02", "after", "4"), ("02", "after2", "4")]
    offered = []
    for module_id, drill_id, answer in steps:
        other = session.module(module_id).drill(drill_id)
        said = service.read_answers(other, {other.asks[0].key: answer})
        assert (await service.submit_prediction(module_id, other, said, 3.0)).outcome == Outcome.VERIFIED
        offered.append(session.practice_after(module_id, drill_id))
    # never ahead of new work: nothing after the first two, then the drill whose mechanism the answer showed
    assert offered[:2] == [None, None] and offered[2] == ("01", "sum-count")
    assert session.practice_after("02", "after3") is None  # an unfinished drill is no new work done
    # opened to practise, a drill with variants gets an instance never answered, never the old one's answers
    practice = service.fresh_instance("01", drill)
    assert service.present("01", base(session)).instance == practice.instance != drill.instance
    assert service.last_verified("01", practice) is None
