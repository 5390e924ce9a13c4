"""`validate` reads a first-divergence drill's keys and refuses malformed ones at file:line."""

from __future__ import annotations

import pytest

from tutor.course.divergence_fields import ASK_KEY
from tutor.course.loader import load_module_file
from tutor.course.schema import DrillKind

DRILL = """\
format_version: 2
module: "01"
drills:
  - id: scale
    kind: first-divergence
    prompt: Where does a contract first fail?
    setup: |
      import torch
      raw = torch.full((2, 4, 4, 3), 200, dtype=torch.uint8)
    code: |
      img = raw.float()
      x = img.permute(0, 3, 1, 2)
      centered = x - 0.5
      loss = centered.mean()
    contracts:
      img: {range: [0, 1]}
      x: {shape: [B, 3, H, W], dtype: float32}
      loss: {finite: true, holds: "loss.dim() == 0"}
    stages:
      - {name: convert, lines: [1, 1]}
      - {name: layout, lines: [2, 4]}
    answer: 1
    wrong_answers:
      - {answer: 3, misconception: the shift is where values leave the range}
      - {answer: layout, misconception: a permute changes values}
    solution: |
      img = raw.float() / 255
      x = img.permute(0, 3, 1, 2)
      centered = x - 0.5
      loss = centered.mean()
    explanation: uint8 pixels are 0..255.
    hints:
      - What range does `raw` have?
      - {trace_until: 0}
"""


def load(tmp_path, text):
    path = tmp_path / "01.yaml"
    path.write_text(text)
    return load_module_file(path)


def test_a_first_divergence_drill_reads_into_its_contracts_stages_and_one_ask(tmp_path):
    module, errors = load(tmp_path, DRILL.replace("{trace_until: 0}", "Which line first reads the pixels?"))
    assert errors == []
    drill = module.drills[0]
    assert drill.kind is DrillKind.FIRST_DIVERGENCE and drill.is_repair and drill.is_first_divergence
    spec = drill.divergence
    assert [c.name for c in spec.contracts] == ["img", "x", "loss"]
    assert spec.contracts[1].shape == ("B", 3, "H", "W") and spec.contracts[1].dtype == "torch.float32"
    assert spec.contracts[2].holds == "loss.dim() == 0" and spec.holds == (("loss", "loss.dim() == 0"),)
    assert spec.answer_line == 1 and [s.name for s in spec.stages] == ["convert", "layout"]
    (ask,) = drill.asks
    assert ask.key == ASK_KEY and ask.kind == "line" and ask.options == ("convert", "layout")
    assert [(w.answer, w.ask) for w in drill.wrong_answers] == [("3", ASK_KEY), ("layout", ASK_KEY)]


def test_a_trace_until_hint_is_a_hint_tier(tmp_path):
    module, errors = load(tmp_path, DRILL.replace("answer: 1\n", "answer: 3\n").replace(
        "{answer: 3, misconception", "{answer: 1, misconception").replace("{trace_until: 0}", "{trace_until: 2}"))
    assert errors == [], errors
    drill = module.drills[0]
    assert drill.divergence.trace_until == (None, 2)
    assert "up to line 2" in drill.hints[1]


@pytest.mark.parametrize("old, new, where, says", [
    ("{trace_until: 0}", "{trace_until: 0}", "hints[1].trace_until", "expected a line of the code, 1 to 4"),
    ("{range: [0, 1]}", "{ranges: [0, 1]}", "contracts.img.ranges", "unknown key"),
    ("shape: [B, 3, H, W]", "shape: [B, 3.5, H, W]", "contracts.x.shape", "expected a list of sizes"),
    ("{range: [0, 1]}", "{range: [1, 0]}", "contracts.img.range", "low <= high"),
    ("dtype: float32", "dtype: float31", "contracts.x.dtype", "unknown dtype"),
    ("answer: 1\n", "answer: 9\n", "answer", "line 9 is not in the code"),
    ("{answer: 3, misconception", "{answer: L1, misconception", "wrong_answers[0].answer",
     "this is the drill's `answer`"),
    ("{name: layout, lines: [2, 4]}", "{name: layout, lines: [1, 4]}", "stages[1]", "overlaps"),
    ("loss: {finite: true", "nowhere: {finite: true", "contracts.nowhere", "the code never names 'nowhere'"),
    ("    answer: 1\n", "    answer: 1\n    trace_function: step\n", "trace_function",
     "the code defines no function 'step'"),
    ('holds: "loss.dim() == 0"', 'holds: "loss.dim( =="', "contracts.loss.holds", "Python syntax error"),
])
def test_malformed_keys_are_refused_at_their_line(tmp_path, old, new, where, says):
    assert old in DRILL
    _module, errors = load(tmp_path, DRILL.replace(old, new))
    mine = [e for e in errors if e.field.endswith(where)]
    assert mine, [str(e) for e in errors]
    assert says in mine[0].message, mine[0].message
    assert mine[0].line > 1 and str(mine[0]).startswith(str(tmp_path / "01.yaml"))


def test_a_trace_hint_that_would_show_the_failing_row_is_refused(tmp_path):
    _module, errors = load(tmp_path, DRILL.replace("{trace_until: 0}", "{trace_until: 1}"))
    assert any("shows the failing row" in e.message for e in errors)


def test_the_kind_needs_format_2_and_refuses_prediction_keys(tmp_path):
    _module, errors = load(tmp_path, DRILL.replace("format_version: 2", "format_version: 1"))
    assert any("format_version: 2" in e.message for e in errors)
    _module, errors = load(tmp_path, DRILL.replace("    answer: 1\n", "    answer: 1\n    check: assert True\n"))
    assert any(e.field.endswith("check") and "goes with kind" in e.message for e in errors)
    _module, errors = load(tmp_path, DRILL.replace("    contracts:\n", "    ask: [{expr: x, kind: shape}]\n    contracts:\n"))
    assert any(e.field.endswith("ask") for e in errors)


@pytest.mark.parametrize("old, new, where, says", [
    ("prompt: Where does a contract first fail?", "prompt: Where does `img = raw.float()` break a contract?", "prompt",
     "quotes the answer line's code ('img = raw.float()')"),
    ("explanation: uint8 pixels are 0..255.", "title: The bug on line 1\n    explanation: uint8 pixels are 0..255.",
     "title", "names the answer line (line 1)"),
    ("- What range does `raw` have?", "- Remember, a permute never changes values; it reorders dimensions.",
     "first hint", "states the misconception of wrong answer 'layout'"),
])
def test_naming_the_answer_line_or_a_misconception_before_the_reveal_warns(tmp_path, old, new, where, says):
    from tutor.course.giveaway import drill_giveaways

    text = DRILL.replace("{trace_until: 0}", "Which line first reads the pixels?").replace(
        "a permute changes values", '"a permute never changes values, it only reorders the dimensions"')
    module, errors = load(tmp_path, text)
    assert errors == [] and drill_giveaways(module, module.drills[0]) == []
    assert old in text
    module, errors = load(tmp_path, text.replace(old, new))
    assert errors == [], errors
    found = [g for g in drill_giveaways(module, module.drills[0]) if g.where == where]
    assert found and says in found[0].reason, [str(g) for g in drill_giveaways(module, module.drills[0])]


def test_a_norm_named_like_a_line_and_a_common_line_in_the_intro_are_not_giveaways(tmp_path):
    """"L1 loss" is a norm, not line 1; an intro quoting a short line every drill has is not this drill's answer."""
    from tutor.course.giveaway import drill_giveaways

    text = DRILL.replace("{trace_until: 0}", "Which line first reads the pixels?").replace(
        "a permute changes values", '"a permute never changes values, it only reorders the dimensions"')
    module, _ = load(tmp_path, text.replace("prompt: Where does a contract first fail?",
                                            "prompt: An L1 loss is next. Where does a contract first fail?"))
    assert [g for g in drill_giveaways(module, module.drills[0]) if g.where == "prompt"] == []
    module, _ = load(tmp_path, text.replace("prompt: Where does a contract first fail?",
                                            "prompt: Where, by L1, does a contract first fail?"))
    assert [g.reason for g in drill_giveaways(module, module.drills[0]) if g.where == "prompt"] == [
        "names the answer line (line 1)"]


def test_an_unquoted_colon_in_a_hint_is_explained(tmp_path):
    _module, errors = load(tmp_path, DRILL.replace("{trace_until: 0}", "Remember: a permute moves no values"))
    assert any(e.field.endswith("hints[1]") and "as a mapping" in e.message for e in errors), [str(e) for e in errors]
