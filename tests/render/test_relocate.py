"""A lesson page's body moved into the printable course (builder/render/relocate.py): its
ids made unique to its lesson, its links made to hold from the new page, and nothing else
of its markup changed, hostile text included."""

from __future__ import annotations

from html.parser import HTMLParser

from builder.render.relocate import Move, moved_body

HELD = {"l/one/index.html": "one", "l/two/index.html": "two"}
ONE = Move("l/one/index.html", "print/index.html", HELD, shift=2)


def _moved(body: str, before: str = "<header id='top'>menu</header>") -> str:
    page = f'<html><body>{before}<main><div class="prose" data-x>{body}</div>'
    page += '<section id="run-it"><a href="#run-it">run</a></section></main></body></html>'
    return str(moved_body(page.encode(), ONE))


def test_only_the_prose_moves_with_its_ids_prefixed_by_its_lesson() -> None:
    moved = _moved('<div class="heading"><h2 id="a">A</h2></div><div><p id="b">x</p></div>')
    assert (
        moved == '<div class="heading"><h4 id="one--a">A</h4></div><div><p id="one--b">x</p></div>'
    )


def test_links_lead_to_the_lesson_or_section_in_the_page_or_from_its_folder() -> None:
    links = {
        "#a": "#one--a",
        "../two/index.html": "#lesson-two",
        "../../l/two/index.html#s": "#two--s",
        "../../l/two/": "#lesson-two",
        "../../l/one/index.html#a": "#one--a",
        "../../glossary/index.html#jit": "../glossary/index.html#jit",
        "example.py": "../l/one/example.py",
        "../../l/gone/index.html?q=1#x": "../l/gone/index.html?q=1#x",
        "https://jax.dev/a#b": "https://jax.dev/a#b",
        "mailto:a@b.c": "mailto:a@b.c",
        "/abs/path": "/abs/path",
    }
    for given, wanted in links.items():
        assert _moved(f'<a href="{given}">x</a>') == f'<a href="{wanted}">x</a>', given


def test_references_to_ids_images_and_lazy_loading() -> None:
    moved = _moved(
        '<span aria-describedby="c d" id="c">t</span><label for="i">l</label>'
        '<picture><source srcset="../../charts/n.svg 1x, ../../charts/w.svg 2x">'
        '<img src="../../charts/a.svg" alt="a &lt;b&gt; &quot;c&quot;" loading="lazy"></picture>'
    )
    assert 'aria-describedby="one--c one--d" id="one--c"' in moved
    assert 'for="one--i"' in moved
    assert 'srcset="../charts/n.svg 1x, ../charts/w.svg 2x"' in moved
    assert '<img src="../charts/a.svg" alt="a &lt;b&gt; &#34;c&#34;">' in moved


class _Texts(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.texts.append(data)


def test_hostile_text_stays_text_and_nested_elements_stay_whole() -> None:
    hostile = "&lt;/div&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp;amp; &#x27; \u2028"
    moved = _moved(f'<div><pre><code>{hostile}</code></pre><div title="&quot;&gt;">in</div></div>')
    reader = _Texts()
    reader.feed(moved)
    assert reader.tags == ["div", "pre", "code", "div"]
    assert "".join(reader.texts) == "</div><script>alert(1)</script> &amp; ' \u2028in"


def test_a_page_without_a_prose_element_moves_nothing() -> None:
    assert moved_body(b"<main><p id='x'>no body</p></main>", ONE) == ""
    assert moved_body(b"", ONE) == ""
