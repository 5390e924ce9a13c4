"""The use-case layer every front end calls: learner actions in, presentation-neutral reports out.

``service`` runs the actions, ``reports`` are what they return, ``presentation`` turns a
report into neutral lines, ``states`` are the enums they share. (Nothing is imported
here: ``tutor.grading`` reads ``states`` and the service reads ``grading``.)
"""
