"""Plain mode's module list, its map: the modules and their states, the weakest mechanisms, and the
learner's choice at the module prompt (a number, Enter to resume or start, `weak`, `test NN`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tutor.course.graph import Status
from tutor.plain.flow import Skip, ToMap
from tutor.plain.placement import PlainPlacement
from tutor.safe_text import inert

if TYPE_CHECKING:
    from tutor.plain.plain_tutor import PlainTutor


class ModuleChooser:
    def __init__(self, tutor: PlainTutor):
        self.tutor = tutor

    def choose(self) -> tuple[str, str]:
        """The module list, then the learner's choice; an empty line resumes where they left off
        (on a fresh profile: opens the first module). A slip is answered in one line, not the list again."""
        start = self.tutor.session.resume_point()
        if start is None:
            first = next((slot.id for slot in self.tutor.session.course.slots if self.tutor.session.can_open(slot.id)), None)
            start = (first, self.tutor.session.entry_point(first)) if first is not None else None
            enter = f", or Enter to start module {first}" if first is not None else ""
        else:
            enter = f", or Enter to resume module {start[0]}"
        listed = False
        while True:
            if not listed:
                self.tutor.say("")
                self.tutor.say("Modules:")
                for slot in self.tutor.session.course.slots:
                    state = self.tutor.session.state(slot.id)
                    note = state.reason if state.status in (Status.LOCKED, Status.BROKEN) else state.status.value
                    self.tutor.say(f"  {slot.id}  {inert(slot.title)} — {note}")
                self.say_weakest()
                listed = True
            try:
                choice = self.tutor.ask(f"Module to open (its number{enter}; :quit to leave) > ", "module").strip()
            except (Skip, ToMap):
                listed = False
                continue
            if not choice and start is not None:
                return start
            if choice.lower() == "weak":  # practise my weak spots: a drill on a mechanism a misconception showed
                spots = self.tutor.session.weak_spots()
                if spots:
                    return spots[0]
                self.tutor.say("No weak spots to practise: no misconception of yours is still showing.")
                continue
            if choice.lower() == "interview":  # a mock interview (tutor/interview), then the list again
                from tutor.plain.interview import PlainInterview

                PlainInterview(self.tutor).take()
                listed = False
                continue
            if choice.lower().startswith("test "):  # a test-out of a locked module's prerequisites
                module_id = self._module_id(choice[5:].strip())
                if self.test_out(module_id):
                    return module_id, self.tutor.session.entry_point(module_id)
                listed = False
                continue
            module_id = self._module_id(choice)
            if not choice:
                self.tutor.say("Type a module's number (the list is above).")
            elif self.tutor.session.slot(module_id) is None:
                self.tutor.say(f"There is no module {inert(choice)!r}; type a number from the list above.")
            elif not self.tutor.session.can_open(module_id):
                state = self.tutor.session.state(module_id)
                self.tutor.say(f"Module {module_id} is {state.status.value}: {state.reason}")
                if state.status == Status.LOCKED and self.tutor.session.placement_set(module_id):
                    self.tutor.say(f"Know its prerequisites already? Type 'test {choice}' to test out of them.")
            else:
                return module_id, self.tutor.session.entry_point(module_id)

    def test_out(self, module_id: str) -> bool:
        """A locked module's placement (see :mod:`tutor.placement`); True when it opened the module."""
        slot = self.tutor.session.slot(module_id)
        if slot is None:
            self.tutor.say(f"There is no module {inert(module_id)!r}; type 'test' and a number from the list above.")
            return False
        state = self.tutor.session.state(module_id)
        if state.status != Status.LOCKED:
            self.tutor.say(f"Module {module_id} is {state.status.value}: nothing to test out of.")
            return False
        questions = self.tutor.session.placement_set(module_id)
        if not questions:
            self.tutor.say("Its prerequisites have no questions to test out with.")
            return False
        return PlainPlacement(self.tutor, module_id, questions).take()

    def say_weakest(self) -> None:
        """Beside the module list (plain mode's map): the weakest mechanisms and what would test them."""
        lines = self.tutor.session.weakest_lines()
        if lines:
            self.tutor.say("Weakest mechanisms (how likely you know each, from your attempts):")
            for line in lines:
                self.tutor.say(f"  {inert(line)}")
            if self.tutor.session.weak_spots():
                self.tutor.say("Type 'weak' to practise your weak spots (drills on those mechanisms).")

    def _module_id(self, choice: str) -> str:
        """The module typed: as it is when the course has that id ("1"), else "1" for "01"."""
        if self.tutor.session.slot(choice) is not None or not choice.isdigit():
            return choice
        return choice.zfill(2)
