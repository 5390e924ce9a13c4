"""Values that cross from the learner's process to the judge's: plain data, never code.

A repair or a lab is judged in two confined processes (see ``runner.py``):

* the **learner's process** runs the drill's setup, the learner's code and the
  drill's ``probe``, then :func:`export` writes every name it bound as data;
* the **judge's process**, forked fresh from the zygote, runs the setup again,
  :func:`apply` binds the exported data over it, and only then runs the check.

Nothing the learner's code did can reach the judge except these values: the
learner controls what their code computes, never the code that judges it (a
patched ``torch.allclose``, a replaced ``_run``, a forged result line all stay
behind in the learner's process). The format is JSON with tensors as base64
bytes plus dtype and shape; decoding builds tensors with ``frombuffer`` after
checking every size, and never unpickles.

The learner's side is ``learner.py`` (:func:`export`, and the messages of proxied calls), the
judge's ``judge.py`` (:func:`apply` and decoding); ``rules.py`` holds the one rule both apply,
which names setup bound the judge keeps as its own.

Standard library and torch only, like the rest of the inner sandbox.
"""

from tutor.sandbox.inner.exchange.judge import (BadExport, Unjudgeable, apply, apply_state, decode, learner_exception,
                                                read_storages)
from tutor.sandbox.inner.exchange.learner import encode_doc, export

__all__ = ["BadExport", "Unjudgeable", "apply", "apply_state", "decode", "encode_doc", "export", "learner_exception",
           "read_storages"]
