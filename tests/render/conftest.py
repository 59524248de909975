"""The fixture course and the reference recording, as the render tests read them."""

from __future__ import annotations

import pytest

from builder.course.load import load_course
from builder.course.model import Course
from builder.course.recording import Recording, load
from tests.helpers import FIXTURE_COURSE, REFERENCE


@pytest.fixture(scope="module")
def course() -> Course:
    return load_course(FIXTURE_COURSE)


@pytest.fixture(scope="module")
def reference() -> Recording:
    return load(REFERENCE)
