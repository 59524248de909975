"""An error's line is a field: what shows it (the preview's overlay) reads the field, never
the builder's own message (a mark's line and panel are fields too, which `diff` reads:
tests/review/test_diff.py, timing only)."""

from __future__ import annotations

import pickle

from builder.core.errors import BuildErrors, ContentError, RenderError
from builder.preview.hub import problems


def test_an_errors_line_is_a_field_the_message_says_and_the_overlay_reads() -> None:
    error = RenderError("no term", path="content/lessons/a/lesson.md", line=12)
    assert (error.line, error.message, error.problem) == (12, "no term", "line 12: no term")
    assert str(error) == "content/lessons/a/lesson.md: line 12: no term"
    assert problems(error) == [{"file": error.path, "line": 12, "message": "no term"}]
    revived = pickle.loads(pickle.dumps(BuildErrors([error])))  # from a worker process
    assert problems(revived) == problems(error)


def test_a_message_that_says_line_is_not_read_as_one() -> None:
    """Text a lesson chose ("line 9: ..." in a quoted regex) is no line of the file."""
    error = ContentError("line 9: said by the author", path="course.yml")
    [problem] = problems(error)
    assert problem["line"] == 0 and problem["message"] == "line 9: said by the author"
