"""A learner's session: the course, their profile, and what happens next.

This is the app's model, free of Textual so that other front ends (and tests)
drive exactly the same rules: which modules open, when a drill counts as
verified, what is recorded for each attempt, where a relaunch resumes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tutor.course.graph import ModuleState, Status, effective_requires
from tutor.course.loader import Course, ModuleSlot
from tutor.course.schema import Module
from tutor.progress.review import Clock, Rating, ReviewQueue, utc_now
from tutor.progress.store import Attempt, ProfileStore
from tutor.progress.summary import CourseProgress, summarise

if TYPE_CHECKING:
    from tutor.placement import PlacementQuestion
    from tutor.progress.stats import Stats

SELF_CHECKS = "self-check"  # the position item for a module's self-check questions

OPENABLE = (Status.OPEN, Status.IN_PROGRESS, Status.DONE, Status.TESTED_OUT)


class Session:
    def __init__(self, course: Course, store: ProfileStore, clock: Clock = utc_now, author: bool = False):
        self.course = course
        self.store = store
        # an author at work (`--lessons DIR --watch`) opens any written module, whatever it requires
        self.author = author
        store.use_course(course.identity)  # this course's progress only: a profile holds several
        store.apply_renames(course.renames())  # progress under a renamed drill's old id is the new id's
        self.review = ReviewQueue(store, clock)
        self._progress: CourseProgress | None = None
        self._new_since_practice = 0  # drills finished since a weak spot was last woven in (this sitting)

    # ---------------------------------------------------------------- reading

    @property
    def progress(self) -> CourseProgress:
        if self._progress is None:
            self._progress = summarise(self.course, self.store.attempts(), self.store.position())
            if self.author:
                for module_id, state in self._progress.states.items():
                    if state.status == Status.LOCKED:
                        self._progress.states[module_id] = ModuleState(Status.OPEN, "open to its author (--watch)")
        return self._progress

    def state(self, module_id: str) -> ModuleState:
        return self.progress.states[module_id]

    def can_open(self, module_id: str) -> bool:
        return self.state(module_id).status in OPENABLE

    def slot(self, module_id: str) -> ModuleSlot | None:
        return self.course.slot(module_id)

    def module(self, module_id: str) -> Module | None:
        slot = self.course.slot(module_id)
        return slot.module if slot else None

    def drill_done(self, module_id: str, drill_id: str) -> bool:
        return drill_id in self.progress.of(module_id).drills_done

    def self_check_answered(self, module_id: str, check_id: str) -> bool:
        return check_id in self.progress.of(module_id).self_checks_answered

    def resume_point(self) -> tuple[str, str] | None:
        """Where the learner left off, if that module can still be opened."""
        position = self.store.position()
        if position is None:
            return None
        module_id, item = position
        module = self.module(module_id)
        if module is None or not self.can_open(module_id):
            return None
        if item != SELF_CHECKS and module.drill(item) is None:
            return None
        return position

    def start_point(self, module_id: str | None = None, drill_id: str | None = None) -> tuple[str, str]:
        """Where ``--module ID`` or ``--drill [MODULE/]ID`` begins; ValueError says why it cannot.

        ``--drill MODULE/self-check`` opens that module's self-check questions."""
        if drill_id is not None:
            wanted_module, _, wanted = drill_id.rpartition("/")
            wanted_module = wanted_module or module_id
            found = [m.id for m in self.course.modules() if (m.drill(wanted) is not None or (
                     wanted == SELF_CHECKS and m.self_checks)) and (wanted_module is None or m.id == wanted_module)]
            if not found:
                raise ValueError(f"there is no drill {drill_id!r} in this course")
            if len(found) > 1 and wanted == SELF_CHECKS:
                raise ValueError(f"modules {', '.join(found)} have self-checks: say whose, e.g. --drill {found[0]}/{wanted}")
            if len(found) > 1:
                raise ValueError(f"drill {wanted!r} is in modules {', '.join(found)}: say which, e.g. "
                                 f"--drill {found[0]}/{wanted}")
            module_id, item = found[0], wanted
        elif module_id is not None:
            if self.slot(module_id) is None and module_id.isdigit() and self.slot(module_id.zfill(2)) is not None:
                module_id = module_id.zfill(2)
            if self.slot(module_id) is None:
                raise ValueError(f"there is no module {module_id!r} in this course")
            item = None
        else:
            raise ValueError("name a module or a drill")
        if self.module(module_id) is None or not self.can_open(module_id):
            state = self.state(module_id)
            way_in = (f" (to test out of its prerequisites: 'test {module_id}' at plain mode's [module] prompt, "
                      "or t on the app's map)" if state.status == Status.LOCKED else "")
            raise ValueError(f"module {module_id} is {state.status.value}" + (f": {state.reason}" if state.reason else "")
                             + way_in)
        return module_id, item or self.entry_point(module_id)

    def entry_point(self, module_id: str) -> str:
        """Where opening a module lands: the first unfinished drill, else the self-check."""
        module = self.module(module_id)
        assert module is not None
        for drill in module.drills:
            if not self.drill_done(module_id, drill.id):
                return drill.id
        if module.self_checks and not all(self.self_check_answered(module_id, c.id) for c in module.self_checks):
            return SELF_CHECKS
        return module.drills[0].id

    def next_after(self, module_id: str, drill_id: str) -> str | None:
        """The drill after ``drill_id``, the self-check after the last drill, or None."""
        module = self.module(module_id)
        assert module is not None
        ids = [d.id for d in module.drills]
        index = ids.index(drill_id)
        if index + 1 < len(ids):
            return ids[index + 1]
        return SELF_CHECKS if module.self_checks else None

    def previous_before(self, module_id: str, drill_id: str) -> str | None:
        module = self.module(module_id)
        assert module is not None
        ids = [d.id for d in module.drills]
        index = ids.index(drill_id)
        return ids[index - 1] if index > 0 else None

    # ---------------------------------------------------------------- writing

    def _changed(self) -> None:
        self._progress = None

    def replace_course(self, course: Course) -> None:
        """Use an edited copy of the same course (``--watch``): the profile's progress stays as it is."""
        assert course.identity == self.course.identity
        self.course = course
        self._changed()

    def visit(self, module_id: str, item: str) -> None:
        self.store.set_position(module_id, item)
        self._changed()

    def record(self, attempt: Attempt, review_kind: str | None = None, rating: Rating | None = None) -> list[str]:
        """Store one attempt, rating its review card when given one; return the modules this newly unlocked.

        What to record and whether to rate is the tutoring service's decision
        (:mod:`tutor.tutoring.service`); the session only keeps the books.
        """
        before = self._locked()
        if review_kind is not None and rating is not None:
            self.review.review(attempt.module, attempt.item, review_kind, rating, attempt.seconds)
        self.store.record(attempt)
        return self._newly_unlocked(before)

    def rate(self, module_id: str, item: str, review_kind: str, rating: Rating, seconds: float = 0.0) -> None:
        """Rate an item's review card without an attempt (a free-text self-check's self-rating)."""
        self.review.review(module_id, item, review_kind, rating, seconds)

    def attempted(self, module_id: str, item: str) -> bool:
        return item in self.progress.of(module_id).attempted

    def reviewable(self, module_id: str, item: str) -> bool:
        """A card is created on first sight, then rated only when it falls due (retries don't count)."""
        return self.review.card(module_id, item) is None or self.review.is_due(module_id, item)

    def stats(self) -> Stats:
        """Accuracy, calibration and time, from this profile's attempts."""
        from tutor.progress.stats import compute  # the stats screen's, not the map's: imported on first use

        return compute(self.course, self.store.attempts())

    def weakest_lines(self) -> list[str]:
        """The three weakest mechanisms, the misconceptions still held and the drills that would test them."""
        from tutor.progress.mastery import estimate, weakest
        from tutor.progress.stats import weakest_lines

        return weakest_lines(self.course, weakest(estimate(self.course, self.store.attempts())))

    def weak_spots(self) -> list[tuple[str, str]]:
        """"Practise my weak spots": drills on mechanisms with a misconception still held, in open modules."""
        from tutor.progress.mastery import estimate, weak_spot_queue

        attempts = self.store.attempts()
        open_modules = {slot.id for slot in self.course.slots if slot.module is not None and self.can_open(slot.id)}
        return weak_spot_queue(estimate(self.course, attempts), attempts, open_modules)

    def practice_after(self, module_id: str, drill_id: str, upcoming: str | None = None) -> tuple[str, str] | None:
        """Misconception-driven practice woven into new work: after every ``WEAK_SPOT_EVERY`` drills the
        learner finishes, the next step is one weak-spot drill (another drill on a mechanism whose
        misconception an answer showed, in an open module), never ahead of new work and never blocking
        it: a front end opens it, then goes on where the learner was (``upcoming``, which is therefore
        never the practice). None: carry on as usual."""
        from tutor.progress.mastery import WEAK_SPOT_EVERY

        if not self.drill_done(module_id, drill_id):
            return None  # moving past an unfinished drill is not new work done
        self._new_since_practice += 1
        if self._new_since_practice < WEAK_SPOT_EVERY:
            return None
        spot = next((key for key in self.weak_spots() if key not in ((module_id, drill_id), (module_id, upcoming))), None)
        if spot is not None:
            self._new_since_practice = 0
        return spot

    # ---------------------------------------------------------------- test-out

    def placement_set(self, module_id: str) -> list[PlacementQuestion]:
        """Questions from every unfinished written module this one depends on (each module its own),
        prerequisites first, none asked last time while fresh ones remain."""
        modules = [m for a in self._missing_ancestors(module_id) if (m := self.module(a)) is not None]
        earlier = [a for a in self.store.attempts() if a.kind == "placement" and a.verdict.get("for") == module_id]
        asked = {key for a in earlier for key in a.verdict.get("asked", []) if isinstance(key, str)}
        from tutor.placement import draw  # the judge and the sandbox wire come with it: not at launch

        return draw(modules, asked, seed=f"{module_id}:{self.placement_tries(module_id) + 1}")

    def placement_needs(self) -> tuple[list[str], dict[str, list[str]], set[str]]:
        """What a placement's decision reads: the course order, each module's prerequisites, and the
        modules already done or tested out."""
        order = [slot.id for slot in self.course.slots]
        needs = {m: effective_requires(self.course, m) for m in order}
        return order, needs, self.progress.done | self.progress.tested_out

    def placement_tries(self, module_id: str) -> int:
        """How many placements were taken to open ``module_id`` (each records its try number)."""
        tries = {a.verdict.get("try", a.at) for a in self.store.attempts()
                 if a.kind == "placement" and a.verdict.get("for") == module_id}
        return len(tries)

    def _missing_ancestors(self, module_id: str) -> list[str]:
        """Written, unfinished modules this one needs, directly or through others, in course order."""
        slots = {s.id: s for s in self.course.slots}
        seen: set[str] = set()
        stack = list(slots[module_id].requires)
        while stack:
            req = stack.pop()
            if req in seen or req not in slots:
                continue
            seen.add(req)
            stack.extend(slots[req].requires)
        done = self.progress.done
        skipped = self.progress.tested_out
        return [s.id for s in self.course.slots if s.id in seen and not s.is_coming and s.id not in done | skipped]

    def _locked(self) -> set[str]:
        return {m for m, state in self.progress.states.items() if state.status == Status.LOCKED}

    def _newly_unlocked(self, locked_before: set[str]) -> list[str]:
        self._changed()
        return sorted(m for m in locked_before if self.progress.states[m].status in OPENABLE)

