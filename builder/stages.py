"""The build's stages, in the order builder/build.py runs them: imported together once a
build is not a no-op (the no-op itself needs only builder.manifest and builder.store)."""

from .course import load_course
from .make import Kept
from .site import make_site
from .status import course_status
from .write import write

__all__ = ("Kept", "course_status", "load_course", "make_site", "write")
