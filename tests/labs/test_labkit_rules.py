"""Rules on the learner's source and the submission fingerprint: plain ``ast``, no sandbox needed to test."""

from __future__ import annotations

from tutor.sandbox.inner.labkit import RULES_TEST, TextModules, check_rules, fingerprint

PUZZLE = {"allow_names": ["arange", "where"], "allow_calls": ["arange", "where"], "allow_attributes": ["shape"],
          "no_loops": True, "no_comprehensions": True, "max_lines": 3, "max_columns": 60}
GOOD = "from puzzles import arange, where\n\n# one line\ndef cumsum(a):\n    return a @ where(arange(a.shape[0])[:, None] <= arange(a.shape[0]), 1, 0)\n"


def problems(source: str, rules: dict = PUZZLE) -> list[str]:
    result = check_rules(rules, {"your file": source})
    assert result.name == RULES_TEST
    return result.message.splitlines() if result.status == "failed" else []


def test_a_one_line_puzzle_passes_and_comments_and_blank_lines_do_not_count():
    assert problems(GOOD, {**PUZZLE, "max_columns": 100}) == []


def test_each_broken_rule_is_named_with_its_line():
    loop = "def cumsum(a):\n    out = [a[0]]\n    for x in a[1:]:\n        out.append(out[-1] + x)\n    return torch.stack(out)\n"
    found = problems(loop)
    assert any(p.startswith("rule max_lines: 5 lines of code, at most 3") for p in found)
    assert "line 3: rule no_loops: a `for` loop" in found
    assert any(p.startswith("line 4: rule allow_attributes: `.append`") for p in found)
    assert any(p.startswith("line 5: rule allow_names: `torch` is not allowed") for p in found)
    assert [p for p in found if p.startswith("line ")] == sorted((p for p in found if p.startswith("line ")),
                                                                 key=lambda p: int(p.split(":")[0][5:]))


def test_an_imported_name_is_not_the_files_own():
    # `from torch import cumsum` binds cumsum, but the learner did not write it
    found = problems("from torch import cumsum\ndef f(a):\n    return cumsum(a, 0)\n")
    assert any("line 1: rule allow_names: importing `cumsum`" in p for p in found)
    assert any("line 3: rule allow_calls: calling `cumsum`" in p for p in found)


def test_comprehensions_columns_and_forbidden_modules():
    assert any("no_comprehensions" in p for p in problems("def f(a):\n    return [x for x in a]\n"))
    assert any("line 1: rule max_columns: 62 columns, at most 60" in p for p in problems("x = 1" + " " * 50 + "# abcde\n"))
    engine = {"forbid_names": ["torch"]}
    assert problems("import torch.autograd as ag\n", engine) == ["line 1: rule forbid_names: `torch` may not be used in this lab"]
    assert problems("import math\nx = math.tanh(1.0)\n", engine) == []


def test_a_forbidden_module_is_refused_in_every_import_form_and_its_siblings_are_not():
    rules = {"forbid_modules": ["capstone.model"]}
    refused = "rule forbid_modules: `capstone.model` may not be imported in this lab"
    for source in ("from capstone.model import *\n", "import capstone.model as m\n", "from capstone import model\n",
                   "from capstone.model.sub import x\n", "import capstone.config\nGPT = capstone.model.GPT\n"):
        found = problems(source, rules)
        assert len(found) == 1 and refused in found[0], (source, found)
    for source in ("from capstone import CapstoneError\n", "from capstone.config import GPTConfig\n",
                   "import capstone.models\n", "from llm.model import GPT\n", "from . import model\n"):
        assert problems(source, rules) == [], source


def test_an_unparsable_file_is_a_rule_failure_not_a_crash():
    assert problems("def f(:\n") == ["line 1: syntax error: invalid syntax"]
    assert problems("(" * 500 + ")" * 500)  # nesting too deep for the parser: refused with a message


def test_fingerprint_ignores_layout_comments_and_docstrings_only():
    a = "def f(x):\n    '''doc'''\n    return x + 1  # add\n"
    b = "# header written by the tutor\n\ndef f(x):\n    return (x + 1)\n"
    assert fingerprint(a) == fingerprint(b) != ""
    assert fingerprint(a) != fingerprint("def f(x):\n    return x + 2\n")
    assert fingerprint("def (") == ""


def test_text_modules_import_dotted_names_from_text_only():
    import sys

    finder = TextModules({"llm.bpe": "X = 1\n", "plain_helper": "def f():\n    return 2\n"})
    sys.meta_path.insert(0, finder)
    try:
        import importlib

        assert importlib.import_module("llm.bpe").X == 1
        assert importlib.import_module("plain_helper").f() == 2
        assert importlib.import_module("plain_helper").__file__ == "<course module plain_helper>"
    finally:
        sys.meta_path.remove(finder)
        for name in ("llm", "llm.bpe", "plain_helper"):
            sys.modules.pop(name, None)


def test_a_dotted_forbidden_name_is_refused_where_the_code_reaches_it_and_a_bare_one_in_imports():
    """`forbid_names: [torch.autograd]` never fired before (only plain names were compared); `[autograd]` missed
    `from torch import autograd`. A bare name still leaves attributes alone (`sum` does not forbid `x.sum()`)."""
    dotted = {"forbid_names": ["torch.autograd"]}
    refused = "rule forbid_names: `torch.autograd` may not be used in this lab"
    for source in ("import torch\ng = torch.autograd.grad\n", "from torch.autograd import grad\n",
                   "from torch import autograd\n", "import torch.autograd as ag\n"):
        found = problems(source, dotted)
        assert len(found) == 1 and refused in found[0], (source, found)
    assert problems("import torch\ny = torch.func.grad\n", dotted) == []
    bare = {"forbid_names": ["autograd", "sum"]}
    assert problems("from torch import autograd\n", bare) == ["line 1: rule forbid_names: `autograd` may not be used in this lab"]
    assert problems("import torch.autograd\n", bare) == ["line 1: rule forbid_names: `autograd` may not be used in this lab"]
    assert problems("def f(x):\n    return x.sum()\n", bare) == []
    assert problems("def f(x):\n    return sum(x)\n", bare) == ["line 2: rule forbid_names: `sum` may not be used in this lab"]


def test_a_forbidden_attribute_is_refused_as_a_method_and_on_a_module_and_a_bare_name_is_not():
    # `forbid_names: [argmin]` leaves `x.argmin()` alone by design; `forbid_attributes` is the rule for it
    rules = {"forbid_attributes": ["argmin"]}
    assert problems("def f(d):\n    return d.argmin(dim=1)\n", rules) == [
        "line 2: rule forbid_attributes: `.argmin` may not be used in this lab"]
    assert problems("import torch\ndef f(d):\n    return torch.argmin(d, 1)\n", rules) == [
        "line 3: rule forbid_attributes: `.argmin` may not be used in this lab"]
    assert problems("def f(d):\n    argmin = d.min(1).indices\n    return argmin\n", rules) == []
