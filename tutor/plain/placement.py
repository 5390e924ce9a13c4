"""Test-out in plain mode: the placement the app's test-out screen gives, one ``[test-out]`` prompt at a time.

A screen-reader user reaches a later module the same way as in the app: every skipped module answers
its own questions (every ask of a drill), and each module is decided on its own (:mod:`tutor.placement`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tutor.judge import AnswerError
from tutor.placement import PlacementQuestion, PlacementResult, form_of
from tutor.plain.text import markdown_to_plain
from tutor.safe_text import inert
from tutor.tutoring.presentation import option_lines, placement_summary

if TYPE_CHECKING:
    from tutor.plain.plain_tutor import PlainTutor


class PlainPlacement:
    def __init__(self, tutor: PlainTutor, module_id: str, questions: list[PlacementQuestion]):
        self.tutor = tutor
        self.module_id = module_id
        self.questions = questions

    def take(self) -> bool:
        """Ask every question, say every answer with why, record it; True when the module is open now."""
        say, service = self.tutor.say, self.tutor.service
        results: list[PlacementResult] = []
        for number, question in enumerate(self.questions, start=1):
            say("")
            say(f"== Test-out question {number}/{len(self.questions)} (from module {question.module})")
            results.append(self._answer(question))
        report = self.tutor.act(service.take_placement(self.module_id, results))
        say("")
        for number, row in enumerate(report.rows, start=1):
            say(f"{'right' if row.correct else 'wrong'} {number}. (module {row.module_id}) "
                f"you said {inert(row.said)}; right: {inert(row.right_answer)}")
            if not row.correct and row.why:
                say(f"   why: {inert(row.why)}")
        say(placement_summary(report))
        self.tutor.announce(report.unlocked)
        return report.passed

    def _answer(self, question: PlacementQuestion) -> PlacementResult:
        say, service = self.tutor.say, self.tutor.service
        self.tutor.question_lines(question.check, question.drill)
        while True:
            try:
                if question.check is not None:
                    typed = self.tutor.ask(f"({form_of(question)}) > ", "test-out")
                    return self.tutor.act(service.answer_placement(question, typed))
                texts = {}
                for ask in question.asks:  # every ask of the drill, then one run
                    while True:
                        say(markdown_to_plain(inert(ask.question)))
                        for option in option_lines(ask.options):
                            say(option)
                        typed = self.tutor.ask(f"({form_of(question, ask)}) > ", "test-out")
                        read = service.read_answers(question.drill, {ask.key: typed})[ask.key]
                        if read.readable:
                            texts[ask.key] = typed
                            break
                        say(read.problem)
                return self.tutor.act(service.answer_placement(question, texts))
            except AnswerError as exc:
                say(str(exc))
