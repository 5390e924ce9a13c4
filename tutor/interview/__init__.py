"""Interview mode: a timed, mixed mock interview over what the learner has done, scored, with a debrief.

``plan``: the scope, the question pool and the rule that picks the next question; ``run``: one interview
in progress (its clock, its answers, what the profile records); ``debrief``: what an interview showed,
derived from the recorded attempts like every other view of progress. No Textual, no torch here.
"""
