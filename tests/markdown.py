"""Markdown as the places it is pasted into render it: GitHub's own renderer (cmark-gfm), with
raw HTML let through as GitHub's sanitizer would first see it (unsafe mode), so a test sees
every element the Markdown itself produces."""

from __future__ import annotations

import html

import cmarkgfm
from cmarkgfm.cmark import Options
from django.utils.html import strip_tags


def gfm_html(markdown: str) -> str:
    """``markdown`` rendered to HTML by cmark-gfm (tables, autolinks, raw HTML kept)."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def gfm_text(markdown: str) -> str:
    """The text a reader sees once ``markdown`` is rendered (tags stripped, entities decoded,
    zero-width spaces dropped)."""
    return html.unescape(strip_tags(gfm_html(markdown))).replace("\u200b", "")
