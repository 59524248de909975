"""The fast path of `check` (builder/quickcheck.py) never says fresh where the full path does not.

Every case below damages a course whose recordings are all fresh, then asks both paths.
The full path is load_course + course_status (pydantic); "fresh" means it raised nothing
and every state is fresh. The fast path must return None whenever the full path is not
fresh, and the lesson count when it is, for the ordinary courses we publish.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder import fingerprint, quickcheck, rules
from builder.cli import main
from builder.course import load_course
from builder.errors import BuildError
from builder.recording import Recording, dumps
from builder.status import course_status
from builder.validation import adapter, validate_strict
from tests.conftest import FIXTURE_COURSE, HERE, REFERENCE
from tests.test_hostile_lessons import (
    test_ids_and_slugs_cannot_escape_their_folder_or_the_url as _escapes,
)
from tests.test_hostile_lessons import (
    test_missing_or_mistyped_front_matter_is_named as _mistyped,
)
from tests.test_hostile_recordings import CASES as DAMAGED_RECORDINGS

SCHEMA_DIR = HERE.parent / "schema"


def make_fresh(root: Path) -> tuple[Path, Path]:
    """The fixture course with a valid, fresh recording per lesson (nothing executed)."""
    content, recordings = root / "content", root / "recordings"
    shutil.copytree(FIXTURE_COURSE, content)
    recordings.mkdir()
    write_recordings(content, recordings)
    return content, recordings


def write_recordings(content: Path, recordings: Path) -> None:
    template = json.loads(REFERENCE.read_bytes())
    for lesson in load_course(content).lessons:
        raw = template | {
            "lessonId": lesson.id,
            "contentHash": fingerprint.content_hash(fingerprint.lesson_inputs(lesson)),
            "rendererHash": fingerprint.renderer_hash(),
            "environment": {"backend": "cpu", "deviceCount": 1, **rules.installed_versions()},
        }
        recording = validate_strict(Recording, raw)
        (recordings / f"{lesson.id}.json").write_bytes(dumps(recording))


def full(content: Path, recordings: Path) -> int | None:
    """The full path's verdict: the lesson count when all fresh, None otherwise."""
    try:
        statuses = course_status(load_course(content), recordings)
    except Exception:  # an error message (BuildError, OSError) or a crash: not fresh
        return None
    return len(statuses) if all(s.fresh for s in statuses) else None


def agree(content: Path, recordings: Path) -> tuple[int | None, int | None]:
    fast = quickcheck.all_fresh(content, recordings)
    slow = full(content, recordings)
    assert fast is None or fast == slow, f"fast path said {fast} fresh, full path {slow}"
    return fast, slow


@pytest.fixture
def fresh(tmp_path: Path) -> tuple[Path, Path]:
    return make_fresh(tmp_path)


# -- the schemas the fast path reads are the models' ------------------------------------------


def test_committed_schemas_are_what_pydantic_exports(tmp_path: Path) -> None:
    assert main(["schema", "--dir", str(tmp_path)]) == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(quickcheck.SCHEMA_FILES.values())
    for name in written:
        assert (SCHEMA_DIR / name).read_bytes() == (tmp_path / name).read_bytes(), (
            f"schema/{name} is out of date: run `make schemas`"
        )


def test_no_model_has_a_rule_the_fast_path_does_not_know() -> None:
    """Each validator function is a rule beyond the JSON Schema that quickcheck.py repeats.

    FrontMatter: data names, env names. Recording: generatedAt, finite numbers, series
    lengths, schemaVersion an integer (the fast path reads types strictly). A new one must be taught to
    quickcheck.py (through builder/rules.py) or made a reason to defer; then count it here.
    """
    from builder.course import CourseMeta, FrontMatter, GlossaryTerm

    expected = {FrontMatter: 2, CourseMeta: 0, GlossaryTerm: 0, Recording: 4}
    for model, count in expected.items():
        core = str(adapter(model).core_schema)
        assert core.count("'type': 'function-") == count, model.__name__
        assert model.__pydantic_config__.get("extra") == "forbid", model.__name__


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "format": "date-time"},
        {"type": "object"},
        {"type": "object", "properties": {}},  # extra keys allowed: not how our models read
        {"anyOf": [{"type": "string"}]},
        {"type": "boolean"},
        {"type": "string", "pattern": r"^\d+$"},
        {"$ref": "other.json#/x"},
    ],
)
def test_the_validator_refuses_what_it_does_not_implement(schema: dict[str, Any]) -> None:
    with pytest.raises(quickcheck.Unsupported):
        quickcheck.compile_schema(schema)


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        (1, True),
        (True, False),
        (1.0, False),
        ("1", False),
        (0, False),
        (2**70, False),
    ],
)
def test_the_validator_reads_types_strictly(value: Any, valid: bool) -> None:
    check = quickcheck.compile_schema({"type": "integer", "minimum": 1})
    assert check(value) is valid


def test_numbers_must_be_finite() -> None:
    check = quickcheck.compile_schema({"type": "array", "items": {"type": "number"}})
    assert check([1, 2.5, -3])
    assert not check([math.nan])
    assert not check([math.inf])
    assert not check([1e308])
    assert not check([False])


# -- fresh courses are proved fresh ------------------------------------------------------------


def test_a_fresh_course_is_proved_fresh(fresh: tuple[Path, Path]) -> None:
    assert agree(*fresh) == (4, 4)


def test_the_real_course_agrees() -> None:
    fast, slow = agree(HERE.parent / "content", HERE.parent / "recordings")
    assert fast == slow, "the committed course should be proved fresh when it is fresh"


def test_a_passing_check_imports_no_pydantic(fresh: tuple[Path, Path]) -> None:
    content, recordings = fresh
    code = (
        "import sys; from builder.cli import main; code = main(sys.argv[1:]); "
        "heavy = sorted(m for m in ('pydantic', 'jax', 'matplotlib', 'jinja2', 'markdown_it', "
        "'importlib.metadata') "
        "if m in sys.modules); print(code, heavy)"
    )
    args = ["check", "--content", str(content), "--recordings", str(recordings)]
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines() == ["All 4 recordings are fresh.", "0 []"]


def test_a_failing_check_still_prints_the_table(
    fresh: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    content, recordings = fresh
    (recordings / "basics-02.json").unlink()
    assert main(["check", "--content", str(content), "--recordings", str(recordings)]) == 1
    out = capsys.readouterr().out
    assert "basics-02  missing" in out and "1 of 4 recording(s) not fresh" in out


# -- damage: the fast path defers whenever the full path is not fresh ----------------------------

Damage = Callable[[Path, Path], None]


def lesson(content: Path, lesson_id: str = "basics-01") -> Path:
    return content / "lessons" / lesson_id / "lesson.md"


def front(field: str, value: str, lesson_id: str = "basics-01") -> Damage:
    """Set a front matter field (added before the closing '---' when absent)."""

    def damage(content: Path, recordings: Path) -> None:
        path = lesson(content, lesson_id)
        head, _, body = path.read_text().partition("\n---\n")
        lines = [x for x in head.splitlines() if not x.startswith(f"{field}:")]
        path.write_text("\n".join([*lines, f"{field}: {value}"]) + "\n---\n" + body)

    return damage


def replace(relative: str, old: str, new: str, *, in_recordings: bool = False) -> Damage:
    def damage(content: Path, recordings: Path) -> None:
        path = (recordings if in_recordings else content) / relative
        text = path.read_text()
        assert old in text, (old, path)
        path.write_text(text.replace(old, new, 1))

    return damage


def write(relative: str, data: bytes | str, *, in_recordings: bool = False) -> Damage:
    def damage(content: Path, recordings: Path) -> None:
        path = (recordings if in_recordings else content) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())

    return damage


def recording(change: Callable[[dict[str, Any]], None], lesson_id: str = "basics-01") -> Damage:
    def damage(content: Path, recordings: Path) -> None:
        path = recordings / f"{lesson_id}.json"
        raw = json.loads(path.read_bytes())
        change(raw)
        path.write_text(json.dumps(raw, indent=2, ensure_ascii=False))

    return damage


def remove(relative: str, *, in_recordings: bool = False) -> Damage:
    def damage(content: Path, recordings: Path) -> None:
        path = (recordings if in_recordings else content) / relative
        shutil.rmtree(path) if path.is_dir() else path.unlink()

    return damage


def panel(raw: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = raw["data"]["panels"][0]
    return result


BAD_CONTENT: dict[str, Damage] = {
    # lessons and their front matter
    "no front matter": write("lessons/basics-01/lesson.md", "Just prose.\n"),
    "unclosed front matter": write("lessons/basics-01/lesson.md", "---\nid: basics-01\n"),
    "front matter is a list": write("lessons/basics-01/lesson.md", "---\n- id\n---\n"),
    "YAML error": front("title", "[unclosed"),
    "lesson.md not UTF-8": write("lessons/basics-01/lesson.md", b"---\nid: basics-01\xe9\n---\n"),
    "unknown field": front("tittle", "T"),
    "missing field": replace("lessons/basics-01/lesson.md", "summary:", "summery:"),
    "id is not the folder": front("id", "basics-09"),
    "two folders, one id": lambda c, r: (
        shutil.copytree(c / "lessons/basics-02", c / "lessons/basics-03"),
        front("slug", "copy", "basics-03")(c, r),
    ),
    "id pattern": front("id", '"../basics-01"'),
    "slug pattern": front("slug", "Upper"),
    "slug too long": front("slug", "x" * 65),
    "slug with newline": front("slug", '"first\\n"'),
    "empty title": front("title", '""'),
    "title too long": front("title", "x" * 301),
    "title is a number": front("title", "5"),
    "title is a list": front("title", "[a]"),
    "order below 0": front("order", "-1"),
    "order above 999": front("order", "1000"),
    "order is text": front("order", "one"),
    "timeout 0": front("timeout", "0"),
    "timeout over an hour": front("timeout", "3601"),
    "timeout NaN": front("timeout", ".nan"),
    "timeout infinite": front("timeout", ".inf"),
    "timeout null": front("timeout", "null"),
    "arc not in course.yml": front("arc", "nowhere"),
    "slug is another lesson's id": front("slug", "basics-02"),
    "slug is another lesson's slug": front("slug", "no-panels"),
    "data names a path": front("data", "[../basics-02/lesson.md]"),
    "data names the example": front("data", "[example.py]"),
    "data file missing": front("data", "[gone.txt]"),
    "data file is a folder": lambda c, r: (
        (c / "lessons/basics-01/sub").mkdir(),
        front("data", "[sub]")(c, r),
    ),
    "data not a list": front("data", "numbers.txt", "speed-01"),
    "env name lower case": front("env", "{lower: x}"),
    "env value a number": front("env", "{FIXTURE_SCALE: 3}", "speed-01"),
    "env not a mapping": front("env", "[A]"),
    "env changed": replace("lessons/speed-01/lesson.md", '"3"', '"4"'),
    "data file changed": write("lessons/speed-01/numbers.txt", "9\n"),
    "example changed": replace("lessons/basics-01/example.py", "2.0", "3.0"),
    "example empty": write("lessons/basics-01/example.py", "\n  \n"),
    "example missing": remove("lessons/basics-01/example.py"),
    "example not UTF-8": write("lessons/basics-01/example.py", b"print(1)  # caf\xe9\n"),
    "lesson.md missing": remove("lessons/basics-01/lesson.md"),
    "a new lesson, unrecorded": lambda c, r: shutil.copytree(
        c / "lessons/basics-01", c / "lessons/basics-03"
    ),
    "lessons folder missing": remove("lessons"),
    # the hostile-lesson tables of tests/test_hostile_lessons.py
    **{
        f"hostile {field} {value}": front(field, value)
        for field, value in _escapes.pytestmark[0].args[1]
    },
    **{
        f"hostile lesson.md {text!r}": write("lessons/basics-01/lesson.md", text)
        for text, _ in _mistyped.pytestmark[0].args[1]
    },
    # course.yml and glossary.yml
    "course.yml missing": remove("course.yml"),
    "course.yml empty": write("course.yml", ""),
    "course.yml no arcs": write("course.yml", "title: T\nsummary: S\narcs: []\n"),
    "course.yml extra key": replace("course.yml", "title: Fixture", "colour: red\ntitle: Fixture"),
    "arc extra key": replace("course.yml", "    title: Basics", "    title: Basics\n    x: 1"),
    "arc id pattern": replace("course.yml", "id: speed", "id: Speed"),
    "glossary taught_in unknown": replace("glossary.yml", "taught_in: basics-01", "taught_in: x-1"),
    "glossary duplicate id": replace("glossary.yml", "id: primitive", "id: jaxpr"),
    "glossary duplicate term by case": replace("glossary.yml", "term: primitive", "term: JAXPR"),
    "glossary not a list": write("glossary.yml", "jaxpr: x\n"),
    "glossary item extra key": replace("glossary.yml", "  term: jaxpr", "  term: jaxpr\n  x: 1"),
    "glossary definition too long": replace(
        "glossary.yml", "definition: An operation", "definition: " + "x" * 400
    ),
    "glossary YAML error": write("glossary.yml", "- id: [\n"),
}
STALE_INPUTS = {"env changed", "data file changed", "example changed"}
BAD_RECORDINGS: dict[str, Damage] = {
    "recording missing": remove("basics-01.json", in_recordings=True),
    "recording over 20 MiB": recording(lambda r: r.update(stdout="x" * 20 * 2**20)),
    "orphan recording": lambda c, r: shutil.copy(r / "basics-01.json", r / "gone-07.json"),
    "orphan recording folder": lambda c, r: (r / "gone-07.json").mkdir(),
    "recording is a folder": lambda c, r: (
        (r / "basics-01.json").unlink(),
        (r / "basics-01.json").mkdir(),
    ),
    "lessonId of another lesson": recording(lambda r: r.update(lessonId="basics-02")),
    "contentHash": recording(lambda r: r.update(contentHash="0" * 64)),
    "contentHash upper case": recording(lambda r: r.update(contentHash=r["contentHash"].upper())),
    "rendererHash": recording(lambda r: r.update(rendererHash="0" * 64)),
    "jax drift": recording(lambda r: r["environment"].update(jax="0.0.1")),
    "numpy drift": recording(lambda r: r["environment"].update(numpy="1.0")),
    "deviceCount 0": recording(lambda r: r["environment"].update(deviceCount=0)),
    "deviceCount -1": recording(lambda r: r["environment"].update(deviceCount=-1)),
    "deviceCount text": recording(lambda r: r["environment"].update(deviceCount="1")),
    "deviceCount 1.0": recording(lambda r: r["environment"].update(deviceCount=1.0)),
    "deviceCount true": recording(lambda r: r["environment"].update(deviceCount=True)),
    "kind": recording(lambda r: r.update(kind="imagined")),
    "provenance": recording(lambda r: r.update(provenance="recorded_CPU_computation")),
    "generatedAt without timezone": recording(lambda r: r.update(generatedAt="2026-01-01T00:00")),
    "generatedAt not a date": recording(lambda r: r.update(generatedAt="yesterday")),
    "generatedAt a number": recording(lambda r: r.update(generatedAt=20260101)),
    "stdout null": recording(lambda r: r.update(stdout=None)),
    "extra top-level key": recording(lambda r: r.update(extra=1)),
    "missing key": recording(lambda r: r.pop("provenance")),
    "series length": recording(lambda r: panel(r)["series"][0]["y"].append(1)),
    "no labels": recording(lambda r: panel(r).update(labels=[])),
    "no series": recording(lambda r: panel(r).update(series=[])),
    "empty panel title": recording(lambda r: panel(r).update(title="")),
    "label too long": recording(lambda r: panel(r)["labels"].__setitem__(0, "x" * 201)),
    "a value is text": recording(lambda r: panel(r)["series"][0]["y"].__setitem__(0, "1")),
    "a value is a bool": recording(lambda r: panel(r)["series"][0]["y"].__setitem__(0, True)),
    "a value is null": recording(lambda r: panel(r)["series"][0]["y"].__setitem__(0, None)),
    "a value is NaN": recording(lambda r: panel(r)["series"][0]["y"].__setitem__(0, math.nan)),
    "a value is infinite": recording(
        lambda r: panel(r)["series"][0]["y"].__setitem__(0, -math.inf)
    ),
    "a value overflows": replace(
        "basics-01.json", '"y": [\n', '"y": [\n1e400,\n', in_recordings=True
    ),
    "panel kind": recording(lambda r: panel(r).update(kind="line")),
    "data kind": recording(lambda r: r["data"].update(kind="charts")),
    "recording with a BOM": lambda c, r: (r / "basics-01.json").write_bytes(
        b"\xef\xbb\xbf" + (r / "basics-01.json").read_bytes()
    ),
    "recording in UTF-16": lambda c, r: (r / "basics-01.json").write_bytes(
        (r / "basics-01.json").read_text().encode("utf-16")
    ),
    "sidecar nested too deep for json": write(
        "_inputs.json", "[" * 100_000 + "]" * 100_000, in_recordings=True
    ),
    **{
        f"damaged: {name}": write("basics-01.json", data, in_recordings=True)
        for name, (data, _) in DAMAGED_RECORDINGS.items()
    },
}
NOT_FRESH = {**BAD_CONTENT, **BAD_RECORDINGS}


def rehash(content: Path, recordings: Path) -> None:
    """Give each recording the hash of its lesson's inputs as they are now, read without any
    rule, so that a damaged lesson fails on the rule it breaks, not on a stale hash."""
    for folder in sorted((content / "lessons").glob("*")):
        path = recordings / f"{folder.name}.json"
        try:
            raw, _, _ = rules.split_front_matter(rules.read_text(folder / "lesson.md"), folder)
            data, env = raw.get("data", ()), raw.get("env", {})
            inputs = fingerprint.inputs(
                folder.name,
                rules.read_text(folder / "example.py").encode(),
                folder,
                data if isinstance(data, list) else (),
                env if isinstance(env, dict) else {},
            )
            recorded = json.loads(path.read_bytes())
        except (BuildError, OSError, ValueError, TypeError):
            continue
        recorded["contentHash"] = fingerprint.content_hash(inputs)
        path.write_text(json.dumps(recorded, indent=2, ensure_ascii=False))


# Edits the full path may accept (lax pydantic reads "1" as 1) or that need no decision:
# the fast path may defer on them, but must never call them fresh unless the full path does.
EITHER: dict[str, Damage] = {
    "schemaVersion true": recording(lambda r: r.update(schemaVersion=True)),  # full: valid
    "schemaVersion 1.0": recording(lambda r: r.update(schemaVersion=1.0)),  # full: valid
    "order as quoted text": front("order", '"1"'),
    "order as a float": front("order", "1.0"),
    "order as a bool": front("order", "true"),
    "timeout as text": front("timeout", '"60"'),
    "title with a lone surrogate escape": front("title", '"\\ud800"'),
    "env name with a trailing newline": front("env", '{"FIXTURE_SCALE\\n": "3"}', "speed-01"),
    "duplicate JSON key": replace(
        "basics-01.json",
        '"deviceCount": 1',
        '"deviceCount": 2, "deviceCount": 1',
        in_recordings=True,
    ),
    "lone surrogate escape in stdout": replace(
        "basics-01.json", '"stdout": "', '"stdout": "\\ud800', in_recordings=True
    ),
    "a huge integer value": recording(lambda r: panel(r)["series"][0]["y"].__setitem__(0, 2**80)),
}

STILL_FRESH: dict[str, Damage] = {
    "prose edited": replace("lessons/basics-01/lesson.md", "## ", "## Reworded "),
    "example with CRLF line endings": lambda c, r: (c / "lessons/basics-01/example.py").write_bytes(
        (c / "lessons/basics-01/example.py").read_bytes().replace(b"\n", b"\r\n")
    ),
    "a hidden folder under lessons": write("lessons/.draft/lesson.md", "not a lesson"),
    "a file under lessons": write("lessons/README.txt", "notes"),
    "sidecar damaged": write("_inputs.json", "{not json", in_recordings=True),
    "another file in recordings": write("notes.txt", "x", in_recordings=True),
    "an underscore recording": write("_extra.json", "{}", in_recordings=True),
    "no glossary": remove("glossary.yml"),
    "empty glossary": write("glossary.yml", "# nothing yet\n"),
    "generatedAt another zone": recording(
        lambda r: r.update(generatedAt="2026-01-01T09:30:00+05:30")
    ),
    "stdout changed": recording(lambda r: r.update(stdout="anything\n\x1b[31m")),
}


@pytest.mark.parametrize("case", NOT_FRESH)
def test_the_fast_path_defers_on_everything_the_full_path_rejects(
    fresh: tuple[Path, Path], case: str
) -> None:
    NOT_FRESH[case](*fresh)
    if case in BAD_CONTENT and case not in STALE_INPUTS:
        rehash(*fresh)
    fast, slow = agree(*fresh)
    assert slow is None, "the case should make the full path fail; fix the case"
    assert fast is None


@pytest.mark.parametrize("case", EITHER)
def test_the_fast_path_may_defer_but_never_overrules(fresh: tuple[Path, Path], case: str) -> None:
    EITHER[case](*fresh)
    agree(*fresh)


@pytest.mark.parametrize("case", STILL_FRESH)
def test_edits_that_keep_a_course_fresh_stay_fast(fresh: tuple[Path, Path], case: str) -> None:
    STILL_FRESH[case](*fresh)
    assert agree(*fresh) == (4, 4)


def test_the_front_matter_is_split_as_before() -> None:
    """_head_lines may split only a prefix; it must give what splitting everything gives."""
    for text in [
        "---\nid: a\n---\nbody\n",
        "---\r\nid: a\r\n---\r\nbody",
        "---\nid: a\n----\n---\nbody",
        "---\nid: a\x85---\n---\nbody",
        "---\n---\n",
        "---\nid: a\n--- \nbody\n---\nmore",
        "---\nid: a\n---",
        "---\rid: a\r---\rbody",
        "no front matter\n---\n",
    ]:
        assert_split_as_before(text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["---", "--- ", "----", "id: a", "", "\r", "\x85", "x"])).map(
        "\n".join
    )
)
def test_any_text_is_split_as_before(text: str) -> None:
    assert_split_as_before(text)


def assert_split_as_before(text: str) -> None:
    lines = rules._head_lines(text)
    whole = text.splitlines(keepends=True)
    assert lines == whole[: len(lines)]
    if len(lines) < len(whole):
        assert any(line.rstrip() == "---" for line in lines[1:])


# -- a property: mutate a fresh recording or front matter any way ------------------------------

HOSTILE_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2,
    1.0,
    1.5,
    -0.0,
    1e308,
    2**64,
    math.nan,
    math.inf,
    "",
    "x",
    "1",
    "x" * 301,
    "2026-01-01T00:00:00",
    "2026-01-01T00:00:00+00:00",
    "0" * 64,
    "a-01",
    "Upper",
    "../x",
    [],
    [1],
    ["x"],
    {},
    {"A": "b"},
]


@st.composite
def mutations(draw: st.DrawFn, raw: Any) -> Any:
    """`raw` with one change at a random place: a key dropped, added, or a value replaced."""
    if isinstance(raw, dict) and raw and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(raw)))
        return {**raw, key: draw(mutations(raw[key]))}
    if isinstance(raw, list) and raw and draw(st.booleans()):
        index = draw(st.integers(0, len(raw) - 1))
        return [*raw[:index], draw(mutations(raw[index])), *raw[index + 1 :]]
    action = draw(st.sampled_from(["replace", "drop", "add", "append"]))
    if action == "drop" and isinstance(raw, dict) and raw:
        key = draw(st.sampled_from(sorted(raw)))
        return {k: v for k, v in raw.items() if k != key}
    if action == "add" and isinstance(raw, dict):
        return {
            **raw,
            draw(st.sampled_from(["extra", "id", "y", "A"])): draw(st.sampled_from(HOSTILE_VALUES)),
        }
    if action == "append" and isinstance(raw, list):
        return [*raw, draw(st.sampled_from([*raw, *HOSTILE_VALUES]))]
    return draw(st.sampled_from(HOSTILE_VALUES))


FAST_SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def fresh_copy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_fresh(tmp_path_factory.mktemp("property"))


@FAST_SETTINGS
@given(data=st.data())
def test_no_mutated_recording_is_called_fresh_unless_it_is(
    fresh_copy: tuple[Path, Path], data: st.DataObject
) -> None:
    content, recordings = fresh_copy
    path = recordings / "speed-01.json"
    original = path.read_bytes()
    try:
        changed = data.draw(mutations(json.loads(original)))
        path.write_text(json.dumps(changed, indent=2, ensure_ascii=False))
        agree(content, recordings)
    finally:
        path.write_bytes(original)


@FAST_SETTINGS
@given(data=st.data(), as_flat_lines=st.booleans())
def test_no_mutated_front_matter_is_called_fresh_unless_it_is(
    fresh_copy: tuple[Path, Path], data: st.DataObject, as_flat_lines: bool
) -> None:
    content, recordings = fresh_copy
    path = lesson(content, "speed-01")
    original = path.read_bytes()
    head, _, body = path.read_text().partition("\n---\n")
    meta = yaml.safe_load(head.removeprefix("---\n"))
    try:
        changed = data.draw(mutations(meta))
        if as_flat_lines and isinstance(changed, dict):  # the reader that skips YAML
            text = "".join(f"{k}: {v}\n" for k, v in changed.items())
        else:
            text = yaml.safe_dump(changed, allow_unicode=True)
        path.write_text("---\n" + text + "---\n" + body)
        agree(content, recordings)
    finally:
        path.write_bytes(original)


# -- course.yml and glossary.yml read without YAML, exactly as YAML reads them -----------------


def test_plain_course_and_glossary_files_are_read_without_yaml() -> None:
    files = [
        HERE.parent / "content" / "course.yml",
        HERE.parent / "content" / "glossary.yml",
        FIXTURE_COURSE / "course.yml",
        FIXTURE_COURSE / "glossary.yml",
    ]
    flat = 0
    for path in files:
        text = path.read_text()
        read = rules.flat_yaml(text)
        flat += read is not None
        assert read is None or read == yaml.load(text, Loader=yaml.CSafeLoader), path
    assert flat >= 3  # the real course.yml folds its summary (`>-`): that one takes YAML


YAML_LINES = [
    "- id: a",
    "- term: b",
    "  term: b",
    "  id: c",
    "   id: c",
    "title: T",
    "summary: Some words, and more.",
    "arcs:",
    "arcs:  ",
    "  - id: x",
    "    title: y",
    "- id: x",
    "  - id: y",
    "-",
    "- ",
    "- - a",
    "# comment",
    "  # indented comment",
    "",
    "   ",
    "k: value: x",
    "k: 'q'",
    "k: yes",
    "k: 12",
    "k: 1.5",
    "k: a #c",
    "k: a:",
    "\tk: v",
    "k: v\t",
    "k:",
    "k: ",
    "---",
    "...",
    "k: a\r",
    "k: \u00e9t\u00e9",
    "k: a\u00a0",
    "  more words",
    "    more words",
    "%YAML 1.1",
    "k: [a, b]",
    "k: >-",
    "k: a\x0bb",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(YAML_LINES), max_size=8), st.sampled_from(["", "\n"]))
def test_the_flat_yaml_reader_agrees_with_yaml_or_defers(lines: list[str], end: str) -> None:
    text = "\n".join(lines) + end
    read = rules.flat_yaml(text)
    if read is None:
        return
    assert read == yaml.load(text, Loader=yaml.CSafeLoader)


@pytest.mark.parametrize(
    "text",
    [
        "- id: a\n    term: b\n",  # a continued value to YAML, not a field
        "- id: a\n   term: b\n",
        "- id: a\n - term: b\n",
        "title: T\n  more words\n",
        "arcs:\n- id: a\n  title: b\nsummary: c\n",
        "arcs:\n  - id: a\n    title: b\n  summary: c\n",
        "arcs:\n  - id: a\n    title: b\n   x: y\n",
        "arcs:\n  - id: a\n  - id: b\n    title: t\nsummary: s\n",
        "- id: a\n- id: b\n  id: c\n",
        "- id: a\n\n# c\n  term: b\n",
        "- id: a\n  term: b\nk: v\n",
        "k: a\n k: b\n",
        "k: a\nk: b\n",
        "arcs:\n",
        "arcs:\ntitle: T\n",
        "- id: a\n  # c\n    # d\n  term: b\n",
    ],
)
def test_the_flat_yaml_reader_on_tricky_layouts(text: str) -> None:
    read = rules.flat_yaml(text)
    try:
        expected = yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        assert read is None
        return
    assert read is None or read == expected


# -- installed versions without importlib.metadata ------------------------------------------------


def test_dist_info_versions_agree_with_importlib_metadata_for_everything_installed() -> None:
    from importlib import metadata

    names = sorted({d.metadata["Name"] for d in metadata.distributions()})
    for name in names:
        fast = rules.dist_info_versions((name,))
        assert fast is None or fast == {name: metadata.version(name)}, name
    pinned = rules.dist_info_versions(rules.PINNED_PACKAGES)
    assert pinned == {name: metadata.version(name) for name in rules.PINNED_PACKAGES}, (
        "the pinned packages must be read fast"
    )


def dist_info(folder: Path, child: str, metadata: str | None) -> None:
    (folder / child).mkdir(parents=True)
    if metadata is not None:
        (folder / child / "METADATA").write_text(metadata)


@pytest.mark.parametrize(
    ("layout", "fast"),
    [
        (
            {
                "a": [
                    (
                        "Foo_Bar-1.0.dist-info",
                        "Metadata-Version: 2.1\nName: foo.bar\nVersion: 1.0\n",
                    )
                ]
            },
            "1.0",
        ),
        (
            {
                "a": [("foo.bar-1.0.dist-info", "Metadata-Version: 2.1\nVersion: 1.0\n")],
                "b": [("foo_bar-2.0.dist-info", "Metadata-Version: 2.1\nVersion: 2.0\n")],
            },
            "1.0",
        ),
        ({"a": [("foo_bar-1.0.dist-info", "VERSION: 3\nVersion: 1.0\n")]}, "3"),
        ({"a": [("foo_bar-1.0.dist-info", "Name: x\nVersion: 1.0 \n")]}, None),
        ({"a": [("foo_bar-1.0.dist-info", "Name: x\nVersion: 1.0\n  .post1\n")]}, None),
        ({"a": [("foo_bar-1.0.dist-info", "Name: x\n\nVersion: 1.0\n")]}, None),
        ({"a": [("foo_bar-1.0.dist-info", None)]}, None),
        ({"a": [("foo_bar-1.0.egg-info", "Version: 1.0\n")]}, None),
        (
            {
                "a": [
                    ("foo_bar-1.0.dist-info", "Version: 1.0\n"),
                    ("Foo.Bar-2.0.dist-info", "Version: 2.0\n"),
                ]
            },
            None,
        ),
        ({"a.egg": [("foo_bar-1.0.dist-info", "Version: 1.0\n")]}, None),
        ({"a": []}, None),
    ],
)
def test_dist_info_versions_defer_on_anything_unusual(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    layout: dict[str, list[tuple[str, str | None]]],
    fast: str | None,
) -> None:
    from importlib import metadata

    for folder, children in layout.items():
        (tmp_path / folder).mkdir()
        for child, text in children:
            dist_info(tmp_path / folder, child, text)
    monkeypatch.setattr(sys, "path", [str(tmp_path / folder) for folder in layout])
    got = rules.dist_info_versions(("foo.bar",))
    assert got == (None if fast is None else {"foo.bar": fast})
    if got is not None:
        assert got["foo.bar"] == metadata.version("foo.bar")
