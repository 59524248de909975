"""axe-core's findings on a page, for the browser tests: one line each, naming the page, the
rule's id, its impact and the first elements it points at, so that a failure says where to
look without a rerun."""

from __future__ import annotations

import functools
from typing import Any

SERIOUS = ("serious", "critical")


@functools.cache
def _axe() -> Any:
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


def findings(
    page: Any,
    name: str = "",
    impacts: tuple[str, ...] | None = SERIOUS,
    rules: tuple[str, ...] = (),
) -> list[str]:
    """What axe finds on `page` as it stands: the violations of one of `impacts` (every one
    when None) or of one of `rules` (ids), each as 'NAME: id (impact), N elements:
    [the first three targets]'. NAME is `name`, else the page's address."""
    where = name or page.url
    return [
        f"{where}: {v['id']} ({v['impact']}), {len(v['nodes'])} elements: "
        f"{[n['target'] for n in v['nodes']][:3]}"
        for v in _axe().run(page).response["violations"]
        if impacts is None or v["impact"] in impacts or v["id"] in rules
    ]


def assert_none(found: list[str]) -> None:
    """Fails naming every finding, one a line."""
    assert not found, "\n".join(found)
