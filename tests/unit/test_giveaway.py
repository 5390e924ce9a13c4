"""The giveaway check: nothing a learner reads before the reveal may answer the drill."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

from tutor.commands.authoring import validate
from tutor.course.giveaway import drill_giveaways, module_giveaways
from tutor.course.loader import load_course, load_module_file
from tutor.course import observed_record
from tutor.locations import builtin_course_dir

DRILL = """\
format_version: 1
module: "03"
intro: |
  A tensor is a view onto a flat block of memory: sizes, strides and an offset.
drills:
  - id: transpose
    title: {title}
    prompt: |
      `x` is a contiguous 2x3 tensor and `y = x.t()`. Predict `y`'s strides and whether it is contiguous.
    setup: |
      import torch
      x = torch.arange(6.).reshape(2, 3)
    code: |
      y = x.t()
    ask:
      - {{expr: y.stride(), kind: stride}}
      - {{expr: y.is_contiguous(), kind: bool}}
    explanation: A transpose swaps the two strides; no element moves.
    hints: [How many elements apart are neighbours in a row of x?]
    wrong_answers:
      - expr: y.stride()
        answer: "(3, 1)"
        misconception: a transpose copies the data into a fresh row-major layout
"""
OBSERVED = {"y.stride()": "(1, 3)", "y.is_contiguous()": "no"}


def module_with(tmp_path: Path, title: str, intro: str | None = None):
    text = DRILL.format(title=json.dumps(title))
    if intro is not None:
        text = text.replace("A tensor is a view onto a flat block of memory: sizes, strides and an offset.", intro)
    path = tmp_path / "03_views.yaml"
    path.write_text(text)
    module, errors = load_module_file(path)
    assert module is not None, errors
    return module


def test_a_title_holding_the_observed_answer_is_warned_about(tmp_path):
    module = module_with(tmp_path, "Strides (1, 3) after a transpose")
    [warning] = drill_giveaways(module, module.drills[0], OBSERVED)
    assert warning.where == "title" and "(1, 3)" in warning.reason and "y.stride()" in warning.reason
    assert str(warning).startswith(f"{module.file}:{module.drills[0].line}: warning: drill 'transpose'")


def test_the_answer_in_another_spelling_or_in_the_first_hint_is_found(tmp_path):
    module = module_with(tmp_path, "Transposing a 1x3 layout")
    assert [g.where for g in drill_giveaways(module, module.drills[0], OBSERVED)] == ["title"]
    module = module_with(tmp_path, "Transposing a matrix")
    leaky = dataclasses.replace(module.drills[0], hints=("The strides are (1, 3).",))
    assert [g.where for g in drill_giveaways(module, leaky, OBSERVED)] == ["first hint"]


def test_a_shape_inside_a_longer_shape_is_not_the_answer(tmp_path):
    # issue 33 item 8: "1×3" was found inside "2×1×3×4"
    module = module_with(tmp_path, "Transposing a 2×1×3×4 layout")
    assert drill_giveaways(module, module.drills[0], OBSERVED) == []
    module = module_with(tmp_path, "Transposing a 1×3 layout")
    assert [g.where for g in drill_giveaways(module, module.drills[0], OBSERVED)] == ["title"]


def test_a_neutral_title_is_not_warned_about(tmp_path):
    for title in ("Transposing a matrix", "What a transpose does to strides", "Strides after x.t()"):
        module = module_with(tmp_path, title)
        assert drill_giveaways(module, module.drills[0], OBSERVED) == [], title


def test_a_title_that_states_the_outcome_is_warned_about_without_any_observation(tmp_path):
    module = module_with(tmp_path, "A transpose moves no data")
    [warning] = drill_giveaways(module, module.drills[0], None)
    assert warning.where == "title" and "move" in warning.reason
    # the same words as a question, or as a gerund, name a topic: no warning
    for title in ("Does a transpose move data?", "Moving data with a transpose"):
        module = module_with(tmp_path, title)
        assert drill_giveaways(module, module.drills[0], None) == [], title


def test_an_intro_that_names_the_misconception_is_warned_about(tmp_path):
    leaky = "Remember that a transpose never copies the data into a fresh row-major layout."
    module = module_with(tmp_path, "Transposing a matrix", intro=leaky)
    [warning] = drill_giveaways(module, module.drills[0], None)
    assert warning.where == "module intro" and "'(3, 1)'" in warning.reason


def test_a_value_the_code_shows_is_not_a_leak(tmp_path):
    module = module_with(tmp_path, "Transposing a 2x3 tensor")
    assert drill_giveaways(module, module.drills[0], {"y.stride()": "(2, 3)"}) == []


def test_checks_record_is_used_by_validate_until_the_code_changes(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    (course / "course.yaml").write_text(
        'format_version: 1\nid: giveaway-test\ntitle: T\nparts:\n  - {id: p, title: P}\nmodules:\n'
        '  - {id: "03", part: p, requires: [], title: Views, file: 03_views.yaml}\n')
    module = module_with(course, "Strides (1, 3) after a transpose")

    out = io.StringIO()
    assert validate([course], out) == 0, out.getvalue()
    assert "giveaway" not in out.getvalue()  # nothing recorded yet, and the title states no outcome

    observed_record.save(module, {"transpose": OBSERVED})
    out = io.StringIO()
    assert validate([course], out) == 0  # a warning, not an error
    assert "warning: drill 'transpose': the title contains the observed answer" in out.getvalue()
    assert "1 giveaway warning" in out.getvalue()

    changed = Path(module.file)
    changed.write_text(changed.read_text().replace("y = x.t()", "y = x.t().contiguous()"))
    out = io.StringIO()
    validate([course], out)
    assert "giveaway" not in out.getvalue()  # the record no longer describes this code


def test_a_record_holds_only_what_it_was_given(tmp_path):
    module = module_with(tmp_path, "Transposing a matrix")
    assert observed_record.load(module) == {}
    observed_record.save(module, {"transpose": OBSERVED, "no-such-drill": {"a": "1"}})
    assert observed_record.load(module) == {"transpose": OBSERVED}
    observed_record.record_path(module).write_text("{not json")
    assert observed_record.load(module) == {}


def test_the_builtin_course_gives_nothing_away():
    course = load_course(builtin_course_dir(), "builtin")
    found = [str(g) for m in course.modules() for g in module_giveaways(m, observed_record.load(m))]
    assert found == []


def test_a_title_in_sentence_form_is_a_claim_and_a_noun_phrase_is_a_topic(tmp_path):
    claims = ("Views share one version counter", "Padding costs nothing", "Repair: vmap paired the wrong axes",
              "expand repeats nothing", "padding_idx gets no gradient")
    topics = ("A collective that only one rank calls", "Add-k smoothing, and why k is tuned",
              "Repair: what int8 cost in accuracy", "Freezing a backbone by leaving it out of the optimizer",
              "Which constructors copy a NumPy array?", "Named regions and op counts in a profile")
    for title in claims:
        module = module_with(tmp_path, title)
        assert [g.where for g in drill_giveaways(module, module.drills[0], None)] == ["title"], title
    for title in topics:
        module = module_with(tmp_path, title)
        assert drill_giveaways(module, module.drills[0], None) == [], title


REPAIR = """\
format_version: 1
module: "11"
drills:
  - id: layout
    title: {title}
    prompt: |
      The batch is (batch, time, features). Predict out.shape, then repair the layer.
    setup: |
      import torch
      x = torch.zeros(2, 5, 3)
    code: |
      lstm = torch.nn.LSTM(3, 4)
      out, _ = lstm(x)
    ask:
      - {{expr: out.shape, kind: shape}}
    check: |
      assert out.shape == (2, 5, 4)
    solution: |
      lstm = torch.nn.LSTM(3, 4, batch_first=True)   # read dim 1 as time
      out, _ = lstm(x)
    explanation: Without batch_first the LSTM reads dim 0 as time.
    hints: [{hint}]
    wrong_answers:
      - {{answer: "(2, 5, 4)", misconception: the LSTM knows which axis is time}}
"""


def test_a_title_or_first_hint_naming_the_repairs_fix_is_warned_about(tmp_path):
    def warnings(title, hint):
        path = tmp_path / "11_layout.yaml"
        path.write_text(REPAIR.format(title=json.dumps(title), hint=json.dumps(hint)))
        module, errors = load_module_file(path)
        assert module is not None, errors
        return [(g.where, g.reason) for g in drill_giveaways(module, module.drills[0], None)]

    assert warnings("Repair: an LSTM without batch_first", "Which axis is time?") == [
        ("title", "names what the repair adds (batch_first)")]
    assert [w for w, _ in warnings("Repair: an LSTM on batch-major data", "Set batch_first.")] == ["first hint"]
    # the comment in the solution ("read dim 1 as time") is not code, and plain words are not the fix
    assert warnings("Repair: an LSTM on batch-major data", "Which axis does it read as time?") == []


def test_an_unwritable_data_directory_costs_the_record_not_the_command(tmp_path, monkeypatch):
    module = module_with(tmp_path, "Transposing a matrix")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the data directory should be")
    monkeypatch.setenv("PYTORCH_TUTOR_HOME", str(blocker / "home"))
    observed_record.save(module, {"transpose": OBSERVED})  # nothing raised
    assert observed_record.load(module) == {}


def test_a_number_in_the_intro_answers_a_drill_only_in_a_sentence_about_its_code(tmp_path):
    # issue 33 item 8: the intro speaks of the whole module; its "(1, 3) layout" of another example is not
    # this drill's answer, while a sentence naming the drill's own `y` and giving (1, 3) is
    other = "A tensor is a view: a (1, 3) layout of another example is one row."
    module = module_with(tmp_path, "Transposing a matrix", intro=other)
    assert drill_giveaways(module, module.drills[0], OBSERVED) == []
    about = "After a transpose, `y` has strides (1, 3)."
    module = module_with(tmp_path, "Transposing a matrix", intro=about)
    assert [g.where for g in drill_giveaways(module, module.drills[0], OBSERVED)] == ["module intro"]
