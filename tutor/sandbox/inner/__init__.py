"""The inner side of the sandbox: the zygote, its confined runners, and the start-up probe.

Namespaces, mounts, Landlock and seccomp are set up by hand (ctypes) because the warm
torch must be forked: bubblewrap- or nsjail-style launchers exec a fresh program per
run, which would import torch again each time (1.3-1.5 s instead of ~30 ms).

It runs as its own program, ``python -I -S`` running ``tutor.sandbox.inner`` (``-I``: no
``PYTHONPATH``, no user site; ``-S``: no ``.pth`` file's code runs before confinement, the
site directories are put on ``sys.path`` as data by ``zygote_process.interpreter_command``),
and imports only the standard library, torch, and ``tutor.sandbox.wire`` and
``tutor.sandbox.framing``, the two modules it shares with the UI side: no lessons,
answer keys or profile ever exist in a process that runs untrusted code. Everything is
imported before the first runner is forked, since a runner cannot read the tutor's
installed package (tier 1 covers it with an empty tmpfs, tier 2 leaves it out of the
Landlock rules: it holds the course with its solutions).

By concern:

=================  =============================================================
``kernel``         syscall numbers and libc through ctypes; process basics
``seccomp``        the system-call filter, and naming a trapped call
``landlock``       the filesystem allow-list, TCP and signal scoping
``mounts``         tier 1's private root
``cgroups``        a per-run memory and tasks cap, where one can be had
``scratch``        tiers 2 and 3: an on-disk scratch tree, measured and removed
``tree``           the process tree of one run, and the order of confinement
``pool``           forking runners, and the pre-forked pool
``warm``           importing torch in a fork-safe state
``start``          the zygote's start-up and the facts it reports
``loop``           the zygote's select loop: requests, deadlines, reaping
``runner``         a runner's body: run the request, write the observation
``describe``       the described-value format, written from real objects
``exchange``       a judged run's data from the learner's process to the judge's
``probe``          which tier this machine gives (a dry run of each)
=================  =============================================================
"""
