"""Interview mode in plain mode: the same mock interview as the app's, one ``[kind] … > `` prompt at a time.

Reached by ``pytorch-tutor --plain interview`` and by typing ``interview`` at the module prompt. The
setup prompts are ``[interview]``; answers use the prompt kinds a drill uses (``[answer]``,
``[confidence]``, ``[code]``, ``[self-check]``, ``[rating]``), so a script that can do a module can do an
interview. Ends with the debrief (Markdown, which reads as plain text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tutor.interview.debrief import debrief, markdown
from tutor.interview.plan import DONE_SCOPE, LENGTHS, QuestionKind, Scope, scopes
from tutor.interview.run import Answered, Interview, Question
from tutor.judge import AnswerError, parse_answer
from tutor.plain.flow import Leave, Skip, ToMap
from tutor.plain.reading import numbered
from tutor.plain.text import markdown_to_plain
from tutor.safe_text import inert
from tutor.tutoring.presentation import option_lines, rubric_lines
from tutor.wording import count

if TYPE_CHECKING:
    from tutor.plain.plain_tutor import PlainTutor

SKIPPED = "Skipped: it counts as not answered (the debrief leaves it out)."


class PlainInterview:
    def __init__(self, tutor: PlainTutor, minutes: int | None = None, scope: str | None = None):
        self.tutor = tutor
        self.minutes = minutes
        self.scope_key = scope

    def take(self) -> None:
        say = self.tutor.say
        session = self.tutor.session
        offered = [s for s in scopes(session.course, session.progress.done | session.progress.tested_out) if s.modules]
        if not offered:
            say("There is nothing to interview on yet: no module is written.")
            return
        minutes = self.minutes or self._length()
        scope = self._scope(offered)
        if scope is None:
            return
        interview = Interview(self.tutor.service, scope, minutes)
        say("")
        say(f"== Interview: {minutes} minutes on {inert(scope.title)}. Time is soft: an answer after a question's "
            "limit still counts. :skip passes a question, :quit ends the interview (what you answered is kept).")
        leaving: Leave | None = None
        try:
            while (question := interview.next_question()) is not None:
                say("")
                say(f"== Question {question.number} — {question.words} (module {question.module}) — "
                    f"{interview.time_line()}")
                try:
                    self._ask(interview, question)
                except Skip:
                    interview.current = None
                    say(SKIPPED)
            say("")
            say("Time is up." if interview.remaining <= 0 else "That was every question this scope has.")
        except ToMap:
            say("Interview ended early.")
        except Leave as exc:  # :quit or the end of input: the debrief of what was answered, then leave
            leaving = exc
        self._debrief(interview, scope)
        if leaving is not None:
            raise leaving

    def _debrief(self, interview: Interview, scope: Scope) -> None:
        say, session = self.tutor.say, self.tutor.session
        found = debrief(session.course, session.store.attempts(), interview.id)
        if found is None:
            say("No question was answered, so there is no debrief.")
            return
        say(markdown(found, scope.title))
        say("To keep it: pytorch-tutor interview --debrief --markdown FILE")

    def _length(self) -> int:
        while True:
            typed = self.tutor.ask(f"Interview length in minutes ({', '.join(map(str, LENGTHS))}; Enter for "
                                   f"{LENGTHS[0]}) > ", "interview").strip()
            if not typed:
                return LENGTHS[0]
            if typed.isdigit() and int(typed) in LENGTHS:
                return int(typed)
            self.tutor.say(f"Type {', '.join(map(str, LENGTHS[:-1]))} or {LENGTHS[-1]}.")

    def _scope(self, offered: list[Scope]) -> Scope | None:
        say = self.tutor.say
        by_key = {s.key: s for s in offered}
        if self.scope_key is not None:
            if self.scope_key in by_key:
                return by_key[self.scope_key]
            say(f"There is no scope {inert(self.scope_key)!r} with modules to ask about; choose one below.")
        say("Scopes:")
        for s in offered:
            say(f"  {s.key} — {inert(s.title)} ({count(len(s.modules), 'module')})")
        default = offered[0].key
        while True:
            typed = self.tutor.ask(f"Scope (Enter for {default}) > ", "interview").strip().lower()
            if not typed:
                return by_key[default]
            if typed in by_key:
                return by_key[typed]
            say(f"Type one of: {', '.join(by_key)}." if typed != DONE_SCOPE else
                "You have not done or tested out of a module yet: choose a part of the course.")

    def _ask(self, interview: Interview, question: Question) -> None:
        say, act = self.tutor.say, self.tutor.act
        self.tutor.question_lines(question.check, question.drill)
        while True:
            try:
                if question.kind in (QuestionKind.PREDICT, QuestionKind.TRIAGE):
                    texts = {}
                    for ask in question.drill.asks:
                        for option in option_lines(ask.options):
                            say(option)
                        texts[ask.key] = self.tutor.read_answer(ask).text
                    answered = act(interview.answer_prediction(texts, self.tutor.read_confidence()))
                elif question.kind is QuestionKind.REPAIR:
                    answered = act(interview.answer_repair(self.tutor.read_code("Repair the code.")))
                elif question.kind is QuestionKind.CHOICE:
                    typed = self.tutor.ask("Your answer (a letter) > ", "self-check")
                    parse_answer("choice", typed, question.check.options)  # a letter first, then how sure
                    answered = interview.answer_choice(typed, self.tutor.read_confidence())
                else:
                    typed = self.tutor.ask("Your answer > ", "self-check")
                    shown = interview.answer_explain(typed)
                    say("Model answer: " + markdown_to_plain(inert(shown.model_answer)))
                    for text in rubric_lines(shown.points):
                        say(text)
                    answered = interview.rate(self.tutor.read_rating(
                        "Compared with the model answer and its points, how did you do?"))
                break
            except AnswerError as exc:
                say(str(exc))
        self._verdict(answered)

    def _verdict(self, answered: Answered) -> None:
        say = self.tutor.say
        over = f" (over its {answered.question.limit // 60}-minute limit: it still counts)" if answered.over_limit else ""
        if answered.correct is None:
            say(f"Not judged: {inert(answered.not_judged)}")
            return
        say(("Right" if answered.correct else "Wrong") + f" — {int(answered.seconds)} s{over}.")
        if answered.question.kind is QuestionKind.EXPLAIN:
            return
        if not answered.correct and answered.right_answer:
            say(("The reference repair:\n" + numbered(answered.right_answer)) if answered.question.kind is
                QuestionKind.REPAIR else f"Right answer: {inert(answered.right_answer)}")
        if answered.why and not answered.correct:
            say(f"Why: {inert(answered.why)}")
        if answered.explanation:
            say("Mechanism: " + markdown_to_plain(inert(answered.explanation)))
        elif answered.model_answer and not answered.correct:
            say("Model answer: " + markdown_to_plain(inert(answered.model_answer)))
