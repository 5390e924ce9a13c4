"""pytorch-tutor: predict, observe and verify what PyTorch does.

The package is split so that each concern has one home:

- ``tutor.course``   the lesson format: YAML loading, schema, the course graph
- ``tutor.judge``    parsing learner answers and comparing them with observations
- ``tutor.sandbox``  running snippets in a separate process (the only torch importer)
- ``tutor.progress`` the learner's profile (SQLite) and progress derived from it
- ``tutor.commands.authoring`` the ``validate`` and ``check`` commands for lesson authors
- ``tutor.app``      the Textual user interface

Everything except ``tutor.app`` imports neither Textual nor torch.
"""

__version__ = "0.1.0"
