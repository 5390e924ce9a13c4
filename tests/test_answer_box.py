"""The answer box's examples never answer a drill (issue 12, item 5).

``pytorch-tutor check`` judges every example of an ask's kind against what the drill
observed; the built-in course's check (tests/test_lessons.py) therefore proves that no
placeholder answers any drill in the course. This proves the check catches one.
"""

from __future__ import annotations

import pytest

from tutor.cli import main
from tutor.judge.kinds import KIND_FORMS, expected_form, form_examples

pytestmark = pytest.mark.slow


def test_check_refuses_an_example_that_answers_the_drill(tmp_path, mini_course_dir, capsys):
    example = form_examples("text")[0]
    module = tmp_path / "m.yaml"
    text = (mini_course_dir / "01_first.yaml").read_text()
    module.write_text(text.replace('      y = x.t()\n      print("transposed")\n',
                                   f'      y = x.t()\n      name = "{example}"\n')
                      .replace('- {expr: y.stride(), kind: stride, question: "y.stride()"}',
                               '- {expr: y.stride(), kind: stride, question: "y.stride()"}\n'
                               '      - {expr: name, kind: text, question: "name?"}')
                      .replace('      - {answer: "(3, 1)", misconception: a transpose copies the data}',
                               '      - {expr: y.stride(), answer: "(3, 1)", misconception: a transpose copies}\n'
                               '      - {expr: name, answer: "Other", misconception: m}'))
    assert main(["check", str(module), "--drill", "transpose-strides"]) == 1
    out = capsys.readouterr().out
    assert f"the answer box's example {example!r} answers it" in out


def test_every_example_is_shown_in_the_form():
    for kind, form in KIND_FORMS.items():
        assert all(example in expected_form(kind) for example in form.examples), kind
