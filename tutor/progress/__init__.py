"""The learner's profile: every attempt, where they left off, and progress derived from them."""

from tutor.progress.store import Attempt, ProfileError, ProfileStore
from tutor.progress.summary import CourseProgress, summarise

__all__ = ["Attempt", "CourseProgress", "ProfileError", "ProfileStore", "summarise"]
