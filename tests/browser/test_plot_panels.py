"""A lesson with line and scatter panels in headless Chromium, recorded through the real
subprocess: at 1280 and 375 px, light and dark, each chart is the theme's and the size's
drawing, loaded, its text at 11 px or more, on no white box; the page is no wider than the
window; its values read in the prose; axe finds nothing serious."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from builder.pipeline.build import build
from tests.browser.a11y import assert_none, findings
from tests.browser.conftest import _serve
from tests.browser.test_course_site import BACKGROUND
from tests.browser.test_reader_round4 import SMALLEST_TEXT
from tests.helpers import plots_course

pytestmark = pytest.mark.browser

PAGE = "l/lines-and-points/index.html"
VIEWS = [("light", 1280), ("dark", 1280), ("light", 375), ("dark", 375)]


@pytest.fixture(scope="module")
def plots_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    paths = plots_course(tmp_path_factory.mktemp("plots"))
    build(paths, execute=True, jobs=1)
    server, url = _serve(paths.out.parent)
    yield url
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("scheme", "width"), VIEWS)
def test_each_chart_is_the_themes_and_the_sizes_drawing(
    new_page: Any, plots_url: str, scheme: str, width: int
) -> None:
    page = new_page(scheme, {"width": width, "height": 800})
    page.goto(plots_url + PAGE)
    page.evaluate("document.querySelectorAll('img').forEach(i => i.loading = 'eager')")
    other = "dark" if scheme == "light" else "light"
    for number in (1, 2, 3):
        figure = page.locator(f"#panel-{number}")
        img = figure.locator(f"img.chart-{scheme}")
        img.scroll_into_view_if_needed()
        assert img.is_visible() and not figure.locator(f"img.chart-{other}").is_visible()
        found = img.evaluate(SMALLEST_TEXT)
        source = found["src"].rsplit("/", 1)[-1]
        assert source.endswith("-narrow.svg") == (width < 680), source
        assert ("-dark" in source) == (scheme == "dark"), source
        assert img.evaluate("i => i.naturalWidth") > 0
        assert found["px"] >= 11, f"panel {number} at {width} px: text at {found['px']:.1f} px"
        box = img.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
        if scheme == "dark":  # no white box: the chart is transparent on the dark page
            assert img.evaluate(BACKGROUND) not in ("rgb(255, 255, 255)", "rgba(255, 255, 255, 1)")
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")


def test_the_prose_reads_the_recorded_values(new_page: Any, plots_url: str) -> None:
    page = new_page("light")
    page.goto(plots_url + PAGE)
    text = page.locator("main").inner_text()
    assert "After ten steps the loss is 0.2075." in text
    assert "The fitted slope is 1.999" in text
    note = page.locator("data.rv").first
    note.focus()
    assert "at step 10, in loss" in page.locator(".rv-note").first.inner_text()


@pytest.mark.parametrize(("scheme", "width"), VIEWS)
def test_no_serious_accessibility_violations(
    new_page: Any, plots_url: str, scheme: str, width: int
) -> None:
    page = new_page(scheme, {"width": width, "height": 800})
    page.goto(plots_url + PAGE)
    assert_none(findings(page))
