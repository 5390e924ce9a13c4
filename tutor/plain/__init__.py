"""Plain mode: the tutor line by line on stdin and stdout (screen readers, scripts, terminals where a
full-screen app is unwelcome). ``plain_tutor`` holds the session loop, drills, repairs, labs and
self-checks; ``choose`` the module list; ``placement`` a test-out; ``interview`` a mock interview;
``reading`` how answers, confidences and code are read; ``flow`` how a ``:`` command leaves a prompt;
``text`` lesson Markdown as plain text (the app uses it too, which is why this file imports nothing).
"""
