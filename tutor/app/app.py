"""The Textual application: wires the session and the sandbox to the screens."""

from __future__ import annotations

import time

from typing import TYPE_CHECKING

from textual.app import App
from textual.binding import Binding

from tutor.app.commands import ModuleCommands
from tutor.app.idle import IdleExit
from tutor.app.screens.confirm import ConfirmScreen
from tutor.app.screens.map import MapScreen
from tutor.course.graph import Status
from tutor.course.loader import Course
from tutor.progress.store import ProfileStore
from tutor.safe_text import openable_link, safe_line
from tutor.session import SELF_CHECKS, Session

if TYPE_CHECKING:  # the tutoring core and the sandbox client are imported on first use, after the map's first frame
    from tutor.app.messages import Reported
    from tutor.sandbox.client import Sandbox
    from tutor.tutoring.reports import ModuleRef
    from tutor.tutoring.service import TutoringService


def lesson_screens() -> tuple[type, ...]:
    """The screens that show one item of a module, imported on first use: the map's first frame
    does not wait for them (and for what they import)."""
    from tutor.app.screens.drill import DrillScreen
    from tutor.app.screens.exercise import ExerciseScreen
    from tutor.app.screens.self_check import SelfCheckScreen

    return DrillScreen, ExerciseScreen, SelfCheckScreen


class TutorApp(App):
    CSS_PATH = "tutor.tcss"
    TITLE = "pytorch-tutor"
    COMMANDS = App.COMMANDS | {ModuleCommands}
    BINDINGS = [
        Binding("f1", "help", "Help", tooltip="how the tutor works, and every key"),
        Binding("f2", "review", "Review", show=False, tooltip="spaced review: what is due"),
        Binding("f3", "stats", "Stats", show=False, tooltip="accuracy, calibration and time"),
        Binding("ctrl+q", "quit", "Quit", priority=True,
                tooltip="quit (a running snippet is stopped with everything it started)"),
    ]

    def __init__(self, course: Course, store: ProfileStore, sandbox: Sandbox | None = None,
                 profile_name: str = "default", start: str = "map", session: Session | None = None,
                 watch: bool = False, begin: tuple[str, str] | None = None, idle_exit: float = 0.0,
                 interview: tuple[int | None, str | None] = (None, None)):
        super().__init__()
        self.interview_request = interview  # `pytorch-tutor interview --minutes M --scope S` (None: asked)
        self.interview_clock = time.monotonic  # an interview's clock (a Pilot test plays 15 minutes at once)
        # serve-ui's tabs: end the session after idle_exit minutes without input (tutor/app/idle.py)
        self.idle_exit = IdleExit(idle_exit) if idle_exit > 0 else None
        self.begin = begin  # (module, item) from --module / --drill (Session.start_point): opened instead of resuming
        self.watch_lessons = watch  # --watch: reload the course when its YAML changes (tutor/app/course_watch.py)
        self.session = session or Session(course, store, author=watch)
        self.start = start
        self._sandbox = sandbox
        if sandbox is not None:
            sandbox.on_note = self._sandbox_note
        self._tutoring: TutoringService | None = None
        self._waiting_for_first_frame: list | None = []  # None once the first frame is on the screen
        self.profile_name = profile_name
        self.sub_title = self._status_line(ready=False)
        self.newly_opened: str | None = None  # a module just unlocked: the map highlights it once
        self.sandbox_ready = False  # the zygote has answered (runs asked for before it are queued)
        # a woven-in weak-spot drill on screen, and where Next goes after it: ((module, drill), (module, item))
        self.practice_return: tuple[tuple[str, str], tuple[str, str | None]] | None = None

    @property
    def sandbox(self) -> Sandbox:
        """The sandbox (made on first use, as plain mode makes it: its zygote starts after the first frame)."""
        if self._sandbox is None:
            from tutor.course import grants
            from tutor.sandbox.client import Sandbox

            course = self.session.course
            self._sandbox = Sandbox(**grants.sandbox_options(course.root, course.modules()))
            self._sandbox.on_note = self._sandbox_note
        return self._sandbox

    def _sandbox_note(self, note: str) -> None:
        self.notify(note, title="Sandbox restarted", severity="warning")

    def close_sandbox_sync(self) -> None:
        """Stop the zygote if one was made (after ``run``: on_unmount has normally stopped it already)."""
        if self._sandbox is not None:
            self._sandbox.close_sync()

    @property
    def tutoring(self) -> TutoringService:
        """The tutoring service every screen calls (made on first use: the map's first frame does not wait)."""
        if self._tutoring is None:
            from tutor.tutoring.service import TutoringService
            from tutor.workspace import Workspace

            workspace = Workspace(self.profile_name, self.session.course.identity)  # this course's lab files
            self._tutoring = TutoringService(self.session, self.sandbox, workspace)
        return self._tutoring

    def _status_line(self, ready: bool) -> str:
        """The header's line: the map says "starting…" until the zygote has answered, then its tier.

        The tier's number only ("tier 1", the words in brackets are in `doctor`), and before the profile:
        at 80 columns the header keeps about 40 characters of it."""
        tier = "starting…"
        if ready:
            label = self.sandbox.tier
            tier = label.split(" (", 1)[0] + (" (weak)" if "weak" in label else "")
        return f"sandbox: {tier} · profile: {self.profile_name}"

    def notify(self, message: str, *, title: str = "", severity="information", timeout: float | None = None,
               markup: bool = False) -> None:
        """Notifications carry lesson text (ids, titles, errors): never read as Textual markup."""
        super().notify(safe_line(message, 2000), title=safe_line(title, 200), severity=severity, timeout=timeout,
                       markup=False)

    def open_url(self, url: str, *, new_tab: bool = True) -> None:
        """Every link click in the app lands here (Textual's Markdown calls it): a course's link is
        untrusted, so only a plain web address is handed on, and only after the learner has seen it."""
        refused = openable_link(url)
        if refused is not None:
            self.notify(f"This link was not opened: {refused}.", title="Link", severity="warning")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                super(TutorApp, self).open_url(url, new_tab=new_tab)

        self.push_screen(ConfirmScreen(f"Open this address in your browser?\n\n{url}"), answered)

    async def on_event(self, event) -> None:
        if self.idle_exit is not None:
            self.idle_exit.saw(event)
        await super().on_event(event)

    def end_if_idle(self) -> None:
        """End the session once nothing was typed or clicked for the idle time (serve-ui's tabs)."""
        if self.idle_exit is not None and self.idle_exit.expired():
            self.exit(message=self.idle_exit.message())

    def on_mount(self) -> None:
        self.push_screen(MapScreen())
        if self.idle_exit is not None:
            from tutor.app.idle import CHECK_EVERY

            self.set_interval(CHECK_EVERY, self.end_if_idle)
        if self.watch_lessons:
            from tutor.app.course_watch import watch_course

            self.run_worker(watch_course(self, self.session.course.root), group="watch", exit_on_error=False)
        store = self.session.store
        if store.notice:
            self.notify(store.notice, title="Profile moved aside", severity="warning", timeout=20)
        broken = [s.id for s in self.session.course.slots if s.is_broken]
        if self.session.course.errors or broken:
            detail = f"modules {', '.join(broken)} are broken" if broken else "the course file has problems"
            self.notify(f"Some lessons could not be loaded: {detail}. Select one on the map for details.",
                        severity="warning", timeout=10)
        if self.start == "review":
            self.action_review()
            return
        if self.start == "interview":
            self.open_interview(*self.interview_request)
            return
        if self.begin is not None:
            self.open_item(*self.begin)
            return
        resume = self.session.resume_point()
        if resume is not None:
            self.open_item(*resume)
            self.notify(f"Welcome back: resuming module {resume[0]}.", timeout=4)

    def on_ready(self) -> None:
        """The first screen is laid out, but Textual's start-up batch threw its first render away: ask
        for the paint now, and run what waits for the first frame once that paint is done."""
        self.screen.refresh()
        self.call_after_refresh(self._first_frame_shown)

    def after_first_frame(self, callback) -> None:
        """Run ``callback`` once the first frame is on the screen (at once, after a refresh, later on)."""
        if self._waiting_for_first_frame is None:
            self.call_after_refresh(callback)
        else:
            self._waiting_for_first_frame.append(callback)

    def _first_frame_shown(self) -> None:
        waiting, self._waiting_for_first_frame = self._waiting_for_first_frame or [], None
        for callback in waiting:  # e.g. the map's intro Markdown: its imports did not hold up the first frame
            callback()
        # Only now the zygote (it imports torch, which would compete for the CPU with the first paint).
        # The learner can type at once; runs wait for it, and the header says when it is ready.
        self.run_worker(self._warm_sandbox(), group="sandbox-start", exit_on_error=False)

    async def _warm_sandbox(self) -> None:
        try:
            await self.sandbox.start()
        except Exception as exc:  # noqa: BLE001 - runs still work cold; say so once
            self.notify(f"The sandbox could not be prepared in advance ({exc}); runs will start cold.",
                        severity="warning")
        self.sandbox_ready = True
        self.sub_title = self._status_line(ready=True)
        for screen in self.screen_stack:
            if hasattr(screen, "sandbox_is_ready"):
                screen.sandbox_is_ready()

    async def on_unmount(self) -> None:
        if self._sandbox is not None:
            await self._sandbox.close()

    def open_module(self, module_id: str) -> None:
        """Open a module at its first unfinished drill, or say why it is closed."""
        if not self.session.can_open(module_id):
            state = self.session.state(module_id)
            way_in = " — or test out of it (t on the map, or 'Test out of' in ctrl+p)" \
                if state.status == Status.LOCKED and self.session.placement_set(module_id) else ""
            self.notify(f"Module {module_id} is {state.status.value}: {state.reason}{way_in}", severity="warning")
            return
        self.open_item(module_id, self.session.entry_point(module_id))

    def open_item(self, module_id: str, item: str) -> None:
        """Show a drill or the self-check, replacing the drill or self-check on screen, if any."""
        DrillScreen, ExerciseScreen, SelfCheckScreen = lesson_screens()
        if item == SELF_CHECKS:
            screen = SelfCheckScreen(module_id)
        elif self.session.module(module_id).drill(item).is_exercise:
            try:
                screen = ExerciseScreen(module_id, item)
            except ValueError as exc:  # the lab's file cannot be placed in the workspace
                self.notify(f"This lab cannot be opened: {exc}", severity="error")
                return
        else:
            screen = DrillScreen(module_id, item)
        self.session.visit(module_id, item)
        if isinstance(self.screen, lesson_screens()):
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def open_self_check(self, module_id: str, index: int = 0) -> None:
        SelfCheckScreen = lesson_screens()[2]
        self.session.visit(module_id, SELF_CHECKS)
        screen = SelfCheckScreen(module_id, index)
        if isinstance(self.screen, lesson_screens()):
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def action_review(self) -> None:
        from tutor.app.screens.review import ReviewScreen

        self.back_to_map()
        self.push_screen(ReviewScreen())

    def open_interview(self, minutes: int | None = None, scope: str | None = None) -> None:
        """A mock interview (tutor/interview): its length and scope are asked unless given."""
        from tutor.app.screens.interview import InterviewScreen

        self.back_to_map()
        self.push_screen(InterviewScreen(minutes, scope, self.interview_clock))

    def action_interview(self) -> None:
        self.open_interview()

    def action_stats(self) -> None:
        from tutor.app.screens.stats import StatsScreen

        self.push_screen(StatsScreen())

    def test_out(self, module_id: str) -> None:
        from tutor.app.screens.placement import PlacementScreen

        state = self.session.state(module_id)
        if state.status != Status.LOCKED:
            self.notify(f"Module {module_id} is {state.status.value}: nothing to test out of.", timeout=4)
            return
        if not self.session.placement_set(module_id):
            self.notify("Its prerequisites have no questions to test out with.", severity="warning")
            return
        self.push_screen(PlacementScreen(module_id))

    def open_practice(self, spot: tuple[str, str], back: tuple[str, str | None]) -> None:
        """A weak-spot drill woven into new work (``Session.practice_after``), on a fresh instance where
        it has variants; Next on it goes ``back`` to where the learner was."""
        module_id, drill_id = spot
        self.tutoring.fresh_instance(module_id, self.session.module(module_id).drill(drill_id))
        self.open_item(module_id, drill_id)
        self.practice_return = (spot, back)
        self.notify("Practice on a weak spot: one of your answers showed a misconception about what this drill "
                    "tests. ctrl+n goes on where you were.", title="Practice", timeout=8)

    def back_to_map(self) -> None:
        self.practice_return = None
        while isinstance(self.screen, lesson_screens()):
            self.pop_screen()

    def on_reported(self, message: Reported) -> None:
        """Every action's report comes up here from its screen: say what it unlocked."""
        self.announce_unlocked(message.report.unlocked)

    def announce_unlocked(self, unlocked: tuple[ModuleRef, ...]) -> None:
        if unlocked:
            names = ", ".join(f"{m.id} {m.title}" for m in unlocked)
            self.notify(f"Unlocked: {names}", title="Module done", timeout=8)
            self.newly_opened = unlocked[0].id  # where the map's cursor goes when the learner is back

    def action_help(self) -> None:
        from tutor.app.screens.help import HelpScreen  # Textual's Markdown (markdown-it): not for the first frame

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())
