"""Labs end to end in the real sandbox: helpers, named tests, rules, wrong submissions, chained stages."""

from __future__ import annotations

import asyncio
import io
from dataclasses import replace
from pathlib import Path

import pytest

from tutor.commands.authoring import check
from tutor.course.loader import load_course
from tutor.grading import grade, request_for
from tutor.judge import labs
from tutor.workspace import Workspace, ensure_starter, lab_files, use_reference

SPACE = Workspace("default", "tensor-puzzles")  # the course's lab files in the default profile

pytestmark = pytest.mark.slow

PACK = Path(__file__).resolve().parent.parent / "fixtures" / "puzzle_labs"


@pytest.fixture(scope="module")
def course():
    course = load_course(PACK)
    assert not course.all_errors(), course.all_errors()
    return course


def lab(course, drill_id):
    return course.slot("1").module.drill(drill_id)


def run(sandbox, drill, code, files=None):
    return grade(drill, {}, asyncio.run(sandbox.run(request_for(drill, code, files))))


def test_check_proves_the_pack_starters_fail_references_pass_and_wrong_submissions_are_rejected():
    out = io.StringIO()
    assert check([PACK], out) == 0, out.getvalue()
    assert "check: ok — 8 drills" in out.getvalue()


def test_check_proves_what_a_wrong_submission_is_told(sandbox, course):
    from tutor.judge.lab_check import lab_problems
    from tutor.tutoring.service import TutoringService

    cumsum = lab(course, "cumsum")
    told, = [w for w in cumsum.wrong_submissions if w.says]
    service = TutoringService(None, sandbox)  # recording off, as check runs it
    assert asyncio.run(lab_problems(cumsum, service)) == []
    misheard = replace(cumsum, wrong_submissions=(replace(told, says="expected [6, 5, 3]"),))
    problems = asyncio.run(lab_problems(misheard, service))
    assert problems == ["wrong submission 1 (examples): the learner is told "
                        "'cumsum([1, 2, 3]) = [6, 5, 3], expected [1, 3, 6]', which does not say 'expected [6, 5, 3]'"]


def test_each_named_test_reports_on_its_own_with_the_authors_message(sandbox, course):
    cumsum = lab(course, "cumsum")
    suffix = cumsum.solution.replace("[:, None] <=", "[:, None] >=")
    outcome = run(sandbox, cumsum, suffix)
    names = [(t.name, t.passed) for t in outcome.tests]
    assert names == [("source-rules", True), ("examples", False), ("random", False)]
    assert outcome.tests[1].message == "cumsum([1, 2, 3]) = [6, 5, 3], expected [1, 3, 6]"
    assert outcome.tests[1].source == ""  # the grader's line stays hidden: the author did not ask to show it
    # suffix sums equal prefix sums on one element: the property test's counterexample is shrunk to the
    # simplest input that differs (length 2, values nearest 0), with the seed that reproduces it
    random = outcome.tests[2].message
    assert random.startswith("cumsum([0, 1]) = [1, 1], expected [0, 1] — trial "), random
    assert "seed 7" in random
    assert run(sandbox, cumsum, suffix).tests[2].message == random  # the same seed: the same counterexample
    assert labs.summary(outcome.tests) == "1/3 tests pass"
    assert outcome.misconception.startswith("in `a @ M`, out[j] sums")
    # the hints of the first failing test come before the lab's own (here the test has none of its own)
    assert labs.failing_hints(cumsum, outcome.tests) == cumsum.hints


def test_a_lab_graded_by_one_check_shows_a_matching_wrong_submissions_misconception(sandbox, course):
    cumsum = lab(course, "cumsum")
    suffix = cumsum.solution.replace("[:, None] <=", "[:, None] >=")
    wrong = replace(cumsum.wrong_submissions[0], code=suffix, test="check")
    one_check = replace(cumsum, tests=(), rules=None, probe="got = cumsum(torch.tensor([1, 2, 3])).tolist()",
                        check='assert got == [1, 3, 6], f"got {got}"', wrong_submissions=(wrong,))
    outcome = run(sandbox, one_check, suffix)
    assert [(t.name, t.passed, t.message) for t in outcome.tests] == [("check", False, "got [6, 5, 3]")]
    assert outcome.misconception == wrong.misconception
    assert run(sandbox, one_check, suffix + "\nx = 1\n").misconception == ""  # another file: no match


def test_a_random_case_failure_names_its_seed_and_the_smallest_case(sandbox, course):
    diff = lab(course, "diff")
    only_long = diff.solution.replace("return a - where", "return a if a.shape[0] == 1 else a - a + where")
    outcome = run(sandbox, diff, only_long)
    random = next(t for t in outcome.tests if t.name == "random")
    assert not random.passed and "seed 7" in random.message
    assert "diff([" in random.message
    assert labs.failing_hints(diff, [t for t in outcome.tests if t.name == "random"])[0] == \
        "A length-1 input must come back unchanged."


def test_patching_a_helper_in_the_learners_process_does_not_reach_the_judge(sandbox, course):
    ones = lab(course, "ones")
    tamper = ("import puzzles\npuzzles.expect = lambda *a, **k: None\nimport torch\n"
              "torch.Tensor.__eq__ = lambda self, other: torch.ones((), dtype=torch.bool)\n"
              "from puzzles import arange\ndef ones(i):\n    return arange(i)\n")
    outcome = run(sandbox, ones, tamper)
    by_name = {t.name: t for t in outcome.tests}
    assert not by_name["examples"].passed and "expected [1]" in by_name["examples"].message
    assert not by_name["source-rules"].passed  # and the imports themselves break the rules


def test_rules_fail_with_the_rule_and_the_line_and_the_other_tests_still_run(sandbox, course):
    cumsum = lab(course, "cumsum")
    loop = ("from puzzles import arange, where\n\n\ndef cumsum(a):\n    out = a.clone()\n"
            "    for i in range(1, a.shape[0]):\n        out[i] = out[i - 1] + a[i]\n    return out\n")
    outcome = run(sandbox, cumsum, loop)
    rules, examples, random = outcome.tests
    assert not rules.passed and "line 6: rule no_loops: a `for` loop" in rules.message
    assert examples.passed and random.passed
    assert outcome.misconception.startswith("a Python loop computes it")


def test_code_that_raises_fails_every_test_with_what_it_raised(sandbox, course):
    flip = lab(course, "flip")
    outcome = run(sandbox, flip, flip.solution.replace("return a[", "return 1 / 0 + a["))
    failing = [t for t in outcome.tests if not t.passed]
    assert {t.name for t in failing} == {"examples", "random"}
    assert all("ZeroDivisionError" in t.message for t in failing)


def test_a_chained_lab_imports_the_learners_stage_or_its_reference(sandbox, course, tutor_home):
    bincount = lab(course, "bincount")
    eye = lab(course, "eye")
    assert [s.name for s in bincount.stages] == ["puzzle_ones", "puzzle_eye"]
    # the learner's own eye is wrong (a 1-D ones): bincount, correct itself, fails through it
    ensure_starter(SPACE, "1", eye)
    path = ensure_starter(SPACE, "1", eye)
    path.write_text(eye.solution.replace("arange(j)[:, None] == arange(j)", "arange(j) == arange(j)"))
    files, notes = lab_files(SPACE, "1", bincount)
    assert "puzzle_eye" in files and "puzzle_ones" not in files
    assert any(n.startswith("puzzle_ones: the reference") for n in notes)
    outcome = run(sandbox, bincount, bincount.solution, files)
    assert not labs.all_passed(outcome.tests)
    # "use the reference for that stage": the same file of bincount now passes
    use_reference(SPACE, "1", "eye")
    files, notes = lab_files(SPACE, "1", bincount)
    assert "puzzle_eye" not in files and any("you switched to it" in n for n in notes)
    assert labs.all_passed(run(sandbox, bincount, bincount.solution, files).tests)
    use_reference(SPACE, "1", "eye", on=False)
    assert "puzzle_eye" in lab_files(SPACE, "1", bincount)[0]


def test_a_lab_graded_by_one_check_reports_it_as_the_test_named_check(sandbox, course):
    ones = lab(course, "ones")
    old_style = replace(ones, tests=(), rules=None, wrong_submissions=(),
                        check="assert got == [1, 1], f'got {got}'", probe="got = ones(2).tolist()")
    outcome = run(sandbox, old_style, old_style.solution)
    assert [(t.name, t.passed) for t in outcome.tests] == [("check", True)]
    outcome = run(sandbox, old_style, old_style.starter)
    assert [t.name for t in outcome.tests] == ["check"] and not outcome.tests[0].passed


def test_a_repairs_judge_imports_the_course_helper_its_setup_imports(sandbox, tmp_path):
    """A repair's setup runs in both halves; the judge's half had no course helpers, so `import puzzles` in the
    setup failed there ('No module named') and every repair of a pack with helpers failed its check."""
    import shutil

    root = tmp_path / "pack"
    shutil.copytree(PACK, root)
    module = root / "01_puzzles.yaml"
    module.write_text(module.read_text().replace("\ndrills:\n", '''
drills:
  - id: helper-repair
    kind: repair
    title: "Repair: a helper's result"
    prompt: The total should count every element.
    setup: |
      import torch
      from puzzles import arange
    code: |
      total = int(arange(4)[:3].sum())
    ask:
      - {expr: total, kind: int}
    check: |
      assert total == int(arange(4).sum()), f"total is {total}"
    solution: |
      total = int(arange(4).sum())
    explanation: The slice drops the last element.
    hints: [Which elements does the slice keep?]
    wrong_answers:
      - {expr: total, answer: "6", misconception: a slice to 3 keeps index 3}
''', 1))
    course = load_course(root)
    assert not course.all_errors(), course.all_errors()
    drill = course.slot("1").module.drill("helper-repair")
    fixed = asyncio.run(sandbox.run(request_for(drill, drill.solution))).observation
    assert fixed.error is None and fixed.check == "passed", (fixed.error, fixed.check_message)
    buggy = asyncio.run(sandbox.run(request_for(drill))).observation
    assert buggy.check == "failed" and "total is 3" in buggy.check_message
