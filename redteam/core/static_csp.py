"""A Content-Security-Policy carried inside an HTML file that is opened from disk (``file://``),
where no server sends the header: a ``<meta http-equiv>`` allowing exactly the file's own
inline styles (by hash), ``data:`` images, and nothing else — no script, no fetch, no form."""

from __future__ import annotations

import base64
import hashlib
from html.parser import HTMLParser

__all__ = ["with_inline_csp"]

_CHARSET = '<meta charset="utf-8">'


class _InlineStyles(HTMLParser):
    """Collects the text of each ``<style>`` element and each ``style=`` attribute, as the
    browser hashes them (attribute values unescaped, element text raw)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.blocks: list[str] = []
        self.attributes: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attributes += [value for name, value in attrs if name == "style" and value]
        if tag == "style":
            self._in_style = True
            self.blocks.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.blocks[-1] += data


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def with_inline_csp(html: str) -> str:
    """``html`` (which must start its head with ``<meta charset="utf-8">``) with a CSP meta
    right after that line, before any resource: ``default-src 'none'``, ``img-src data:``,
    and ``style-src`` the hashes of its own inline styles only."""
    if _CHARSET not in html:
        raise ValueError('the page must declare <meta charset="utf-8"> for its CSP to follow')
    parser = _InlineStyles()
    parser.feed(html)
    parser.close()
    styles = sorted({_sha256(text) for text in parser.blocks})
    if parser.attributes:
        styles += ["'unsafe-hashes'", *sorted({_sha256(text) for text in parser.attributes})]
    policy = "; ".join(
        [
            "default-src 'none'",
            "img-src data:",
            "style-src " + (" ".join(styles) or "'none'"),
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
    return html.replace(_CHARSET, _CHARSET + "\n" + meta, 1)
