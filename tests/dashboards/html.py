"""A small stdlib HTML reader for the dashboard tests: tables by slug, links, SVG elements."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Link:
    href: str
    text: str
    context: list[str] = field(default_factory=list)  # enclosing data-table slugs, if any


class DashboardHTML(HTMLParser):
    """Collects ``<div data-table=slug>`` tables (cell texts per row) and every ``<a href>``."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, list[list[str]]] = {}
        self.headers: dict[str, list[str]] = {}
        self.links: list[Link] = []
        self.tags: list[tuple[str, dict[str, str]]] = []
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_head = False
        self._links: list[Link] = []
        self._depth_table = 0
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.append((tag, a))
        if tag == "div" and "data-table" in a:
            self._table = a["data-table"]
            self.tables[self._table] = []
            self.headers[self._table] = []
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr" and self._table:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "a" and "href" in a:
            link = Link(a["href"], "", [self._table] if self._table else [])
            self.links.append(link)
            self._links.append(link)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table:
            if self._in_head:
                self.headers[self._table] = self._row
            elif self._row:
                self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "thead":
            self._in_head = False
        elif tag == "table" and self._table:
            self._table = None
        elif tag == "a" and self._links:
            link = self._links.pop()
            link.text = " ".join(link.text.split())

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        for link in self._links:
            link.text += data
