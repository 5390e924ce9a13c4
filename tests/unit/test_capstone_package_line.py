"""The map's one line for a capstone module: whose code each of its stage labs is now."""

from tutor.commands.capstone_mine import package_line
from tutor.course.loader import load_course
from tutor.locations import builtin_course_dir
from tutor.workspace import Workspace, exercise_path, use_reference


def modules():
    return {m.id: m for m in load_course(builtin_course_dir()).modules()}


def space(profile="p"):
    return Workspace(profile, load_course(builtin_course_dir()).identity)


def test_a_stage_is_the_reference_until_written_yours_once_written_and_the_reference_when_switched():
    module = modules()["32"]
    assert package_line(space(), module) == "Your package: stage 4 model.py the reference (not started yet)"
    exercise_path(space(), "32", module.drill("build-the-gpt")).write_text("# mine\n", encoding="utf-8")
    assert package_line(space(), module) == "Your package: stage 4 model.py yours"
    use_reference(space(), "32", "build-the-gpt")
    assert package_line(space(), module) == "Your package: stage 4 model.py the reference (you switched to it)"
    assert package_line(space("other"), module).endswith("(not started yet)")  # profiles apart


def test_modules_without_a_stage_lab_have_no_line():
    all_modules = modules()
    assert package_line(space(), all_modules["01"]) is None
    assert package_line(space(), all_modules["37"]) == "Your package: stage 9 scale.py the reference (not started yet)"
