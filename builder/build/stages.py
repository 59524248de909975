"""The build's stages, in the order builder/build/pipeline.py runs them: imported together once a
build is not a no-op (the no-op itself needs only builder.build.manifest and builder.core.store)."""

from ..course.model import load_course
from ..course.status import course_status
from .make import Kept
from .site import make_site
from .write import write

__all__ = ("Kept", "course_status", "load_course", "make_site", "write")
