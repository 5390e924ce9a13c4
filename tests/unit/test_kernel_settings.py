"""Kernel settings for `check`, and what counts as a drill deciding differently under two of them."""

from __future__ import annotations

import pytest

from tutor.commands.drill_proof import DrillReport, answer_changes
from tutor.sandbox.kernel_settings import KernelSettings, SettingError, available
from tutor.commands.validation import load_targets

FLOAT_DRILL = """format_version: 1
module: "01"
intro: A float with a tolerance.
drills:
  - id: mean
    prompt: What is the mean?
    setup: import torch
    code: m = torch.tensor([1.0, 2.0]).mean().item()
    ask:
      - {expr: m, kind: float, tolerance: 0.01}
      - {expr: m > 1, kind: bool}
    explanation: It is 1.5.
    hints: [Add and halve.]
    wrong_answers:
      - {expr: m, answer: "3", misconception: a sum}
"""


def test_a_setting_reads_capability_and_threads():
    assert KernelSettings.parse("default/1") == KernelSettings("default", 1)
    assert KernelSettings.parse("AVX2") == KernelSettings("avx2", None)
    assert KernelSettings.parse("machine/4") == KernelSettings(None, 4)
    assert KernelSettings.parse("machine") == KernelSettings()
    assert KernelSettings("default", 1).label == "default/1" and KernelSettings().label == "machine"
    assert KernelSettings("avx2", 2).environment() == {"ATEN_CPU_CAPABILITY": "avx2"}
    assert KernelSettings(None, 2).environment() == {}
    for bad in ("neon", "default/x", "default/65", "avx2/-1"):
        with pytest.raises(SettingError):
            KernelSettings.parse(bad)


def test_a_capability_needs_every_flag_that_atens_dispatch_reads():
    assert available(frozenset({"sse4_2"})) == ["default"]
    assert available(frozenset({"avx2", "fma"})) == ["default", "avx2"]
    assert available(frozenset({"avx2", "fma", "avx512f"})) == ["default", "avx2"]  # no bw/vl/dq: not ATen's avx512
    assert KernelSettings("avx2").problem(frozenset({"avx2"})).startswith("this CPU lacks fma")
    assert KernelSettings(None, 8).problem(frozenset()) == ""


def _report(described: dict, observed: dict, problems=()) -> DrillReport:
    return DrillReport("01", "mean", 0.1, list(problems), observed=observed, described=described)


def test_a_float_that_moved_inside_its_tolerance_did_not_change_the_answer(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(FLOAT_DRILL)
    drill = load_targets([path])[0].modules[0].drills[0]
    m, gt = (a.key for a in drill.asks)
    value = lambda x: {"type": "float", "value": x}  # noqa: E731 - what the wire describes
    yes = {"type": "bool", "value": True}
    first = _report({m: value(1.5), gt: yes}, {m: "1.5", gt: "yes"})
    assert answer_changes(drill, first, _report({m: value(1.504), gt: yes}, {m: "1.504", gt: "yes"})) == []
    moved = answer_changes(drill, first, _report({m: value(1.6), gt: yes}, {m: "1.6", gt: "yes"}))
    assert moved == [f"{m}: 1.5 -> 1.6"]
    flipped = answer_changes(drill, first, _report({m: value(1.5), gt: {"type": "bool", "value": False}},
                                                   {m: "1.5", gt: "no"}))
    assert flipped == [f"{gt}: yes -> no"]
    assert answer_changes(drill, first, _report({}, {}, ["check failed"])) == ["passes its check under one setting only"]


VARIANT_CHOICE = """format_version: 3
module: "01"
intro: A choice whose options are written with the instance's numbers.
drills:
  - id: second-half
    variants:
      params:
        h: [4, 6]
    prompt: Which slice of `row` holds its second half?
    setup: import torch
    code: |
      row = torch.arange(2 * {{h}})
      second = "row[{{h}}:]"
    ask:
      - expr: second
        kind: choice
        options: ["row[:{{h}}]", "row[{{h}}:]"]
    explanation: The second half starts at index {{h}}.
    hints: [Where does the second half start?]
    wrong_answers:
      - {answer: a, misconception: the first slice is the second half}
"""


def test_a_variant_choice_is_compared_by_the_options_its_instance_showed(tmp_path):
    from tutor.course.variants import present_instance

    path = tmp_path / "m.yaml"
    path.write_text(VARIANT_CHOICE)
    drill = load_targets([path])[0].modules[0].drills[0]
    shown = present_instance(drill, (("h", 6),))  # not the instance the drill is loaded as (h=4)
    key = drill.asks[0].key
    observed, described = {key: "b) row[6:]"}, {key: {"type": "str", "value": "row[6:]"}}
    same = DrillReport("01", "second-half", 0.1, [], observed=observed, described=described, asks=tuple(shown.asks))
    assert answer_changes(drill, same, same) == []
    unrendered = DrillReport("01", "second-half", 0.1, [], observed=observed, described=described)
    assert answer_changes(drill, unrendered, unrendered) != []  # what check said before: "b) row[6:] -> b) row[6:]"
