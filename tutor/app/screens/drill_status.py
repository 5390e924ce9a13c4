"""What the drill screen's status line says after each outcome: the next step, in the learner's words."""

from __future__ import annotations

from tutor.tutoring.states import Outcome

BOX_BELOW = "Your first answer box is below the code (PageDown reads on); what you type goes into it."

NOT_YET_FRESH = ("Not yet. Read the first divergence and the explanation below, then press F5 for a fresh instance "
                 "of this drill (other shapes or values) and predict it: that prediction verifies the drill.")
STATUS = {
    Outcome.VERIFIED: "Verified ✓  Change one thing with ctrl+e and rerun, or ctrl+n for the next drill.",
    Outcome.SYMPTOM_FOUND: "Right: that is the symptom. Now repair it: ctrl+e to edit the code, ctrl+r to run it "
                           "until the check passes.",
    Outcome.NOT_YET: "Not yet. Read the first divergence and the explanation below. Typing now replaces your first "
                     "wrong answer (Tab: the others); Enter runs again, ctrl+g gives a hint.",
    Outcome.OBSERVED: "Compare with the first run: what changed, and why? ctrl+e returns to your predictions.",
    Outcome.REPAIRED: "Repaired ✓  The check passes. ctrl+n for the next drill.",
    Outcome.REPAIRED_PREDICT_NEXT: "The check passes. Now predict the symptom above too (Escape the editor with ctrl+e) "
                                   "to finish the drill.",
    Outcome.CHECK_FAILS: "The check does not pass yet. Change one thing and run again.",
    Outcome.UNREADABLE: "Some answers could not be read; see the hints under them. Nothing was run.",
    Outcome.FRESH_INSTANCE: "You have seen what PyTorch does for this instance: press F5 for a fresh one and "
                            "predict that (ctrl+e still lets you change the code and rerun this one).",
    Outcome.RECALL_NEEDED: "Due for review: type your own prediction in every box (empty, or as shown, is not "
                           "one). Nothing was run or rated.",
}
