"""The answer box's placeholder (and an unreadable answer's message) is plain text that fits the box.

Found in tmux: the error ask's placeholder read "or `no error`" with Markdown's backticks, and the
float and error placeholders were cut at 80 columns. That the examples answer no drill is proved by
``pytorch-tutor check`` (tests/test_answer_box.py).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tutor.judge import read_answer
from tutor.judge.kinds import KIND_FORMS_ALL, expected_form
from tutor.plain.text import markdown_to_plain

BOX_COLUMNS = 70  # an answer box's text at 80 columns: the page's padding, the scrollbar, the box's border


@pytest.mark.parametrize("kind", sorted(KIND_FORMS_ALL))
def test_a_placeholder_is_plain_text(kind):
    form = expected_form(kind)
    assert "`" not in form and "**" not in form, form
    assert markdown_to_plain(form) == form, form


@pytest.mark.parametrize("kind", sorted(KIND_FORMS_ALL))
def test_a_placeholder_fits_the_box_at_80_columns(kind):
    assert len(expected_form(kind)) <= BOX_COLUMNS, expected_form(kind)


@pytest.mark.parametrize("kind", sorted(KIND_FORMS_ALL))
def test_only_examples_are_introduced_as_examples(kind):
    """A note is a spelling ("true / false work too"), never offered as "e.g." sample answers."""
    form = KIND_FORMS_ALL[kind]
    assert ("e.g." in expected_form(kind)) == bool(form.examples)


def test_the_error_form_says_no_error_in_plain_quotes():
    assert '"no error"' in expected_form("error")


def test_an_unreadable_answer_s_message_is_plain_text():
    ask = SimpleNamespace(kind="error", options=(), key="e", expr="x", tolerance=None)
    said = read_answer(ask, "it raises because the sizes differ")
    assert "`" not in said.problem, said.problem
