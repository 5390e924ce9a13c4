"""The lesson format: safe YAML loading, the schema, the course and its graph."""

from tutor.course.errors import LessonError
from tutor.course.loader import Course, ModuleSlot, load_course, load_module_file
from tutor.course.schema import Ask, Drill, Module, SelfCheck, WrongAnswer

__all__ = [
    "Ask",
    "Course",
    "Drill",
    "LessonError",
    "Module",
    "ModuleSlot",
    "SelfCheck",
    "WrongAnswer",
    "load_course",
    "load_module_file",
]
