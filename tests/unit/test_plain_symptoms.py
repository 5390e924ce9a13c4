"""Plain mode through a symptoms-first repair, driven from a script: the output first, the source after the diagnosis."""

from __future__ import annotations

import io
from pathlib import Path

from tutor.course.loader import load_course
from tutor.plain.plain_tutor import run_plain
from tutor.progress.store import ProfileStore
from tutor.session import Session
from tutor.tutoring.symptoms import SOURCE_HIDDEN, SOURCE_SHOWN

COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "symptoms_course"
REPAIR = """\
w = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.05)
ws, grads, losses = [], [], []
for step in range(6):
    opt.zero_grad()
    loss = ((w * xs - ys) ** 2).mean()
    loss.backward()
    ws.append(w.item())
    grads.append(w.grad.item())
    losses.append(loss.item())
    opt.step()
    print(f"step {step}: loss {loss.item():.3f}")
."""


def test_a_symptoms_first_repair_in_plain_mode(tmp_path, scripted_sandbox):
    store = ProfileStore.open(tmp_path / "p.sqlite")
    out = io.StringIO()
    lines = ["01",
             ":trace",        # nothing of the code before the diagnosis
             "b", "yes", "",  # the diagnosis, and no confidence
             *REPAIR.splitlines(), ":quit"]
    assert run_plain(Session(load_course(COURSE), store), "default", io.StringIO("\n".join(lines) + "\n"), out,
                     scripted_sandbox) == 0
    text = out.getvalue()
    before, _, after = text.partition("Which mechanism explains this log?")
    assert SOURCE_HIDDEN in before and "What the program printed:" in before
    assert "    step 3: loss 12.330" in before  # the log, as the run printed it
    assert "fresh_grad" not in before and "opt.step()" not in before and "Code:" not in before
    assert "The trace opens after your first prediction is checked." in after
    diagnosis, _, repair = after.partition(SOURCE_SHOWN)
    assert "you said b) earlier steps' gradients stay in .grad; observed b) earlier steps' gradients stay in .grad" \
        in diagnosis
    assert "Verified ✓ right." not in diagnosis and "opt.step()" not in diagnosis  # the source only after it
    assert "Code:" in repair and "    6 |     loss.backward()" in repair
    assert "Repaired ✓ — the reference solution:" in repair
    assert "Why: backward() adds into .grad" in repair
    assert text.count("Running in the sandbox…") == 2  # the symptoms run and the repair: the diagnosis ran nothing
    session = Session(load_course(COURSE), store)
    assert session.drill_done("01", "settles-or-not")
    store.close()
