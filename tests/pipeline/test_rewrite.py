"""Issue 57: `import` rewrites what is mechanical in a MyST page's prose
(builder/scaffold/rewrite.py), each case as MyST in, the lesson.md snippet out."""

from __future__ import annotations

import pytest

from builder.render.syntax import foreign_syntax
from builder.scaffold.cells import convert
from builder.scaffold.rewrite import Context, rewrite

CONTEXT = Context(
    api=frozenset({"jax"}),
    has_term=lambda term: term in ("jaxpr", "pytree"),
    lesson=lambda key: {"key-concepts": "concepts", "tracing": "tracing"}.get(key),
    labels={"jit-static": ("marking-arguments-as-static", "Marking arguments as static")},
)

CASES = [
    ("{func}`jax.jit`", "[](api:jax.jit)"),
    ("{py:func}`~jax.numpy.dot`", "[`dot`](api:jax.numpy.dot)"),
    ("{func}`the jit <jax.jit>`", "[`the jit`](api:jax.jit)"),
    ("{func}`functools.partial`", "`functools.partial`"),  # no api_links for functools
    ("{class}`~jax.core.Tracer`", "[`Tracer`](api:jax.core.Tracer)"),
    ("{mod}`jax.lax`", "[](api:jax.lax)"),
    (":func:`jax.grad`", "[](api:jax.grad)"),  # reStructuredText's spelling
    ("{code}`x + 1`", "`x + 1`"),
    ("{term}`jaxpr`", "[[jaxpr]]"),
    ("{term}`trees <pytree>`", "[[trees|pytree]]"),
    ("{term}`primitive`", "primitive"),  # not in the glossary: noted
    ("{math}`x^2`", "$x^2$"),
    ("{ref}`jit-static`", "[Marking arguments as static](#marking-arguments-as-static)"),
    ("{ref}`static <jit-static>`", "[static](#marking-arguments-as-static)"),
    ("{ref}`key-concepts`", "[](lesson:concepts)"),
    ("{doc}`../tracing`", "[](lesson:tracing)"),
    ("[Static](jit-static)", "[Static](#marking-arguments-as-static)"),
    ("[Tracing](tracing.md)", "[Tracing](lesson:tracing)"),
    ("[Tracing](tracing-tutorial)", "Tracing"),  # neither: noted
    ("[JAX](https://jax.dev)", "[JAX](https://jax.dev)"),
    ("[file](data.csv)", "[file](data.csv)"),  # a file: the build checks it
    ("a <!-- hidden --> b", "a  b"),
    ("`{func}`kept`` in code", "`{func}`kept`` in code"),
    ("(jit-static)=\n## Marking", "## Marking"),
    ("```{note}\nRead this.\n```", "!!! note\n    Read this."),
    ("```{warning} Careful\nBody.\n```", '!!! warning "Careful"\n    Body.'),
    ("```{hint}\nBody.\n```", '!!! tip "Hint"\n    Body.'),
    (":::{tip} Quick\nBody.\n:::", '!!! tip "Quick"\n    Body.'),
    ("```{admonition} Title\n:class: warning\nBody.\n```", '!!! warning "Title"\n    Body.'),
    ("```{admonition} T\n:class: dropdown\nBody.\n```", '??? note "T"\n    Body.'),
    ("```{dropdown} More\n:open:\nBody.\n```", '???+ note "More"\n    Body.'),
    ("```{seealso}\nOther.\n```", '!!! note "See also"\n    Other.'),
    ("```{math}\n:label: eq\nx = 1\n```", "$$\nx = 1\n$$"),
    ("```{code-block} python\n:linenos:\nx = 1\n```", "```python\nx = 1\n```"),
    ("```{toctree}\na\n```", ""),
    (
        "````{tab-set}\n```{tab-item} A\nOne {func}`jax.jit`.\n```\n```{tab-item} B\nTwo.\n```\n````",
        '===! "A"\n\n    One [](api:jax.jit).\n\n=== "B"\n\n    Two.\n',
    ),
    (
        "````{note}\nOuter.\n```{warning}\nInner.\n```\n````",
        "!!! note\n    Outer.\n    !!! warning\n        Inner.",
    ),
]


@pytest.mark.parametrize(("myst", "lesson"), CASES)
def test_each_construct_becomes_the_builders_own(myst: str, lesson: str) -> None:
    made, _ = rewrite(myst, CONTEXT)
    assert made.strip("\n") == lesson.strip("\n")
    assert not foreign_syntax(made)  # nothing left that the site refuses


@pytest.mark.parametrize(
    ("myst", "said"),
    [
        ("{term}`primitive`", "glossary term 'primitive', which glossary.yml lacks"),
        ("[Tracing](tracing-tutorial)", "link to 'tracing-tutorial', neither a label"),
        ("{ref}`elsewhere`", "link to 'elsewhere', neither a label"),
        ("```{toctree}\na\n```", "deleted"),
    ],
)
def test_what_a_rewrite_loses_is_said(myst: str, said: str) -> None:
    _, lost = rewrite(myst, CONTEXT)
    assert [what for _, _, what, _ in lost if said in what], lost


def test_what_is_not_mechanical_is_left_as_written() -> None:
    """A figure, a glue role: left for the site to refuse (and import to list)."""
    for myst in (":::{figure} plot.png\n:::", "{glue:text}`speedup`"):
        made, _ = rewrite(myst, CONTEXT)
        assert made == myst and foreign_syntax(made)


def test_labels_lead_to_their_heading_anchors_across_cells() -> None:
    """A link before its target, in another cell, still finds it; a label on the title
    leads to the page itself (its text); the anchors are the page's (made unique)."""
    cells = [
        {"cell_type": "markdown", "source": "(top)=\n# Title\n\nSee {ref}`b` and {ref}`top`."},
        {"cell_type": "code", "source": "x = 1", "metadata": {}},
        {"cell_type": "markdown", "source": "## Same\n\n(b)=\n## Same\n\nText."},
    ]
    converted = convert(cells, "page.md", "page")
    assert "See [Same](#same-1) and Title." in converted.body
    assert "(b)=" not in converted.body


@pytest.mark.parametrize(
    ("tags", "placed"),
    [
        (["hide-input"], "{{ cell cell-1 fold=code }}"),
        (["remove-input"], "{{ cell cell-1 output }}"),
        (["hide-output"], "{{ cell cell-1 fold=output }}"),
        (["remove-output"], "{{ cell cell-1 code }}"),
        (["hide-cell"], "{{ cell cell-1 fold=cell }}"),
        (["remove-input", "hide-output"], "{{ cell cell-1 output fold=output }}"),
        (["remove-cell"], ""),
        (["remove-input", "remove-output"], ""),
    ],
)
def test_cell_tags_show_what_myst_nb_shows(tags: list[str], placed: str) -> None:
    cells = [
        {"cell_type": "markdown", "source": "# T\n\nText."},
        {"cell_type": "code", "source": "x = 1", "metadata": {"tags": tags}},
    ]
    converted = convert(cells, "page.md", "page")
    assert converted.body.strip().endswith(placed or "Text.")
    assert ("hide" in converted.parts[0].options) == (not placed)
