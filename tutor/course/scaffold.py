"""``pytorch-tutor new course DIR`` and ``new module DIR``: a pack and a module to start from.

What they write passes ``validate`` and ``check`` as it stands (tests/test_scaffold.py runs
both), so an author starts from green and changes one thing at a time. The module has one
annotated drill of each kind (prediction, repair, lab) and both kinds of self-check
question; the pack is a pip-installable package declaring the ``pytorch_tutor.courses``
entry point, with the course directory inside it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tutor.course.loader import COURSE_FILE, is_course_dir, load_course
from tutor.course.reader import ID_RULE
from tutor.course.schema import FORMAT_VERSION, is_safe_id


class ScaffoldError(Exception):
    """What the author must change for the scaffold to be written; nothing was written."""


def _slug(text: str, sep: str = "-") -> str:
    slug = re.sub(r"[^a-z0-9]+", sep, text.lower()).strip(sep)
    return slug[:40].strip(sep) or "course"


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is a subset of it)."""
    return json.dumps(text)


PYPROJECT = """\
# A lesson pack for pytorch-tutor: `pip install .` and it appears in `pytorch-tutor courses`.
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = {name}
version = "0.1.0"
description = {title}

# The tutor finds the course through this entry point; it never imports the package.
[project.entry-points."pytorch_tutor.courses"]
{course_id} = "{package}"

[tool.setuptools]
packages = ["{package}"]

[tool.setuptools.package-data]
{package} = ["*.yaml", "*.md", "helpers/*.py", "data/**/*"]  # the course, its helpers and data files
"""

PACK_README = """\
# {title}

A lesson pack for [pytorch-tutor](https://pypi.org/project/pytorch-tutor/). The course is
`{package}/`: `course.yaml` lists the modules, one YAML file per module.

```sh
pytorch-tutor validate {package}/              # schema and graph: fast, no torch
pytorch-tutor check {package}/                 # runs every drill in the sandbox
pytorch-tutor --lessons {package}/             # try it as a learner
pytorch-tutor new module {package}/ --id 02 --title "The next module"
pytest --lessons {package}/                    # every drill as its own test (your CI; pip install pytest)
pip install . && pytorch-tutor --course {course_id}
```
"""

COURSE = """\
# The course: its identity (learners' progress is kept under `id`, so keep it stable),
# its parts, and its modules in order. `requires` makes the map's unlock graph.
format_version: {version}
id: {course_id}
title: {title}
parts:
  - {{id: basics, title: Basics}}
modules:
"""

MODULE = """\
# Module {id}: {title}
# One drill of each kind and both kinds of self-check question, annotated. They pass
# `pytorch-tutor validate` and `pytorch-tutor check` as written: change one thing at a time.
# The full reference is lessons/README.md in pytorch-tutor's repository.
format_version: {version}
module: "{id}"
intro: |
  What this module teaches, in a sentence or two of Markdown. Ask before you tell: the
  intro, titles and first hints must not give a drill's answer away (`validate` warns).

drills:
  # A prediction: the learner predicts each `ask`, the sandbox runs setup + code, the
  # judge compares, and every listed wrong answer must be one the judge rejects.
  - id: integer-sum
    kind: prediction
    title: Summing an integer tensor          # names the topic, not the result
    tags: [dtypes, reductions]                # concept tags for the stats screen
    # Variants (format 3): each attempt draws an instance, and every text below names it as
    # {{{{n}}}}; `check` runs several instances and refuses a variant whose answers never move.
    variants:
      params:
        n: {{range: [3, 9]}}
    prompt: |
      `t = torch.arange(1, {{{{n}}}} + 1)`. What dtype does `t.sum()` have, and what value?
    setup: |
      import torch
    code: |
      t = torch.arange(1, {{{{n}}}} + 1)
      s = t.sum()
    ask:
      - expr: s.dtype                         # evaluated after the code; parsed as `kind`
        kind: dtype
      - expr: s.item()
        kind: int
    explanation: |
      Sums of integer tensors accumulate in int64, so they stay integers and do not overflow
      small integer types; the value is 1 + 2 + ... + {{{{n}}}}.
    hints:                                    # in tiers: gentle first, nearly the answer last
      - Does adding whole numbers ever need a fractional part?
      - Integer reductions keep an integer dtype, the widest one.
    wrong_answers:                            # what real learners say, with why they say it
      - expr: s.dtype
        answer: float32
        misconception: reductions always return floating point

  # A repair: `code` runs but computes the wrong thing. The learner predicts the symptom,
  # then edits the code until `check` passes. `check` proves the code fails the check and
  # the `solution` passes it.
  - id: row-means
    kind: repair
    title: Averaging each row
    prompt: |
      This code should give each row's mean as a 1-D tensor of 2 values. What shape does it
      give? Then fix it (ctrl+e).
    setup: |
      import torch
    code: |
      x = torch.ones(2, 3)
      m = x.mean(dim=1, keepdim=True)
    solution: |
      x = torch.ones(2, 3)
      m = x.mean(dim=1)
    ask:
      - expr: m.shape
        kind: shape
    check: |
      assert m.shape == (2,), "one mean per row, in a 1-D tensor"
    explanation: |
      `keepdim=True` keeps the reduced dimension with size 1, which is handy for broadcasting
      back against `x` but is not a 1-D result.
    hints:
      - Which argument decides whether the reduced dimension survives?
      - Remove `keepdim=True`.
    wrong_answers:
      - answer: "(2,)"
        misconception: keepdim only changes anything for 1-D tensors
    # Fixes learners write that patch the symptom, as edits of the solution: `check` proves the
    # check rejects each with `says:` in its message; `validate` warns on a repair with fewer than two.
    wrong_submissions:
      - change:
          - from: "x.mean(dim=1)"
            to: "x.mean(dim=1, keepdim=True).T"
        test: check
        says: "one mean per row, in a 1-D tensor"
        misconception: transposing the column of means makes it a row; it is still 2-D, shape (1, 2)
      - change:
          - from: "x.mean(dim=1)"
            to: "x.mean(dim=0)"
        test: check
        says: "one mean per row"
        misconception: dim names the dimension that is kept; it is the one that is reduced away

  # A lab: the learner writes code in their own editor from `starter`; every save runs the
  # `probe` in the learner's process and the `check` in a fresh one that receives only what
  # the probe computed. The starter must fail the check and the solution pass it.
  - id: write-relu
    kind: lab
    title: Writing ReLU
    prompt: |
      Complete `relu(x)` so that negative entries become 0 and the others stay. Do not use
      `torch.relu`.
    setup: |
      import torch
    starter: |
      def relu(x):
          raise NotImplementedError("replace this line")
    probe: |
      x = torch.tensor([-1.0, 0.0, 2.0])
      out = relu(x)
      returned_its_input = out is x
    check: |
      assert out.tolist() == [0.0, 0.0, 2.0], "negative entries must become 0, the others stay"
      assert not returned_its_input and x.tolist() == [-1.0, 0.0, 2.0], "return a new tensor; leave x alone"
    solution: |
      def relu(x):
          return x.clamp(min=0)
    # Mistakes learners make, as edits of the solution: `check` proves that the test each one
    # names rejects it, with `says:` in its message; `validate` warns on a lab with fewer than two.
    wrong_submissions:
      - change:
          - from: "x.clamp(min=0)"
            to: "x.abs()"
        test: check
        says: "negative entries must become 0"
        misconception: ReLU makes every entry non-negative by dropping its sign
      - change:
          - from: "x.clamp(min=0)"
            to: "x.clamp_(min=0)"
        test: check
        says: "leave x alone"
        misconception: an in-place clamp saves a copy; but it overwrites the caller's tensor and returns it
    explanation: |
      `clamp(min=0)` keeps the positive part and returns a new tensor.
    hints:
      - Which entries change, and to what?
      - Look at `Tensor.clamp`.

# Self-check: interview-style questions that close the module. A free-text question is
# rated by the learner against the model answer; a multiple-choice one is graded.
self_check:
  - id: why-int64
    question: Why would an integer sum use a wider dtype than its input?
    answer: |
      So that adding many small integers cannot overflow: the sum of a large uint8 tensor
      needs more than 8 bits.
  - id: which-keeps-dims
    question: Which call returns a (2, 1) tensor for a (2, 3) `x`?
    options: ["x.mean(dim=1)", "x.mean(dim=1, keepdim=True)", "x.mean()"]
    correct: 1
    answer: "`keepdim=True` keeps the reduced dimension with size 1."
"""


def new_module(course_dir: Path, module_id: str, title: str) -> Path:
    """Write a module file into ``course_dir`` and list it in course.yaml; return the file."""
    course_dir = Path(course_dir)
    if not is_course_dir(course_dir):
        raise ScaffoldError(f"{course_dir} has no {COURSE_FILE}: run `pytorch-tutor new course DIR` first")
    if not is_safe_id(module_id):
        raise ScaffoldError(f"module id {module_id!r}: {ID_RULE}")
    title = " ".join(title.split())
    if not title:
        raise ScaffoldError("give the module a --title")
    course = load_course(course_dir)
    if course.slot(module_id) is not None:
        raise ScaffoldError(f"course.yaml already lists a module {module_id!r}")
    if not course.parts:
        raise ScaffoldError(f"{COURSE_FILE} has no parts to put the module in")
    file_name = f"{module_id}_{_slug(title, '_')}.yaml"
    target = course_dir / file_name
    if target.exists():
        raise ScaffoldError(f"{target} exists already; nothing was written")
    previous = [s.id for s in course.slots]
    requires = f"[{_quoted(previous[-1])}]" if previous else "[]"
    entry = (f"  - {{id: {_quoted(module_id)}, part: {course.parts[-1].id}, requires: {requires}, "
             f"title: {_quoted(title)}, file: {file_name}}}\n")
    course_file = course_dir / COURSE_FILE
    original = course_file.read_text(encoding="utf-8")
    target.write_text(MODULE.format(id=module_id, title=title, version=FORMAT_VERSION), encoding="utf-8")
    course_file.write_text(original + ("" if original.endswith("\n") else "\n") + entry, encoding="utf-8")
    if load_course(course_dir).slot(module_id) is None:  # `modules:` was not the file's last block
        course_file.write_text(original, encoding="utf-8")
        target.unlink()
        raise ScaffoldError(f"could not add the module to {course_file} (is `modules:` its last key?); add "
                            f"this line to its modules by hand:\n{entry}")
    return target


def new_course(directory: Path, title: str | None = None) -> Path:
    """Write a pip-installable pack into ``directory`` (new or empty); return its course directory."""
    directory = Path(directory)
    if directory.exists() and any(directory.iterdir()):
        raise ScaffoldError(f"{directory} is not empty; nothing was written")
    title = " ".join((title or directory.resolve().name.replace("-", " ").replace("_", " ").capitalize()).split())
    course_id = _slug(directory.resolve().name)
    package = _slug(directory.resolve().name, "_")
    if not package[0].isalpha():
        package = "course_" + package
    course_dir = directory / package
    course_dir.mkdir(parents=True)
    (directory / "pyproject.toml").write_text(PYPROJECT.format(
        name=_quoted(f"{course_id}-lessons"), title=_quoted(title), course_id=course_id, package=package))
    (directory / "README.md").write_text(PACK_README.format(title=title, package=package, course_id=course_id))
    (course_dir / COURSE_FILE).write_text(COURSE.format(version=FORMAT_VERSION, course_id=course_id,
                                                        title=_quoted(title)))
    new_module(course_dir, "01", "First steps")
    return course_dir
