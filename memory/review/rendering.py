"""Turning stored text into safe HTML: Markdown, sanitising, and original-vs-converted diffs.

Everything PyRIT stored is untrusted: model output, prompts written by an adversarial LLM,
rationales, labels. Markdown is rendered by markdown-it-py with raw HTML *off* (an LLM's
``<script>`` stays visible text), then the HTML is cleaned by nh3 against a small allow-list,
so a bug in either layer alone cannot put script, event handlers or ``javascript:`` URLs into
a page. Pure functions: no Django models, no database.
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

__all__ = [
    "ALLOWED_ATTRIBUTES",
    "ALLOWED_TAGS",
    "DIFF_MAX_CHARS",
    "FOLD_CHARS",
    "FOLD_LINES",
    "Diff",
    "has_markup",
    "is_long",
    "plain_html",
    "render_markdown",
    "sanitize_html",
    "text_diff",
]

#: Tags Markdown can produce and that we keep. No ``img`` (remote images would load from
#: third parties: Markdown images become links), no ``svg``/``math``/``iframe``/``form``.
ALLOWED_TAGS = frozenset(
    {
        "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6",
        "strong", "em", "del", "s", "code", "pre", "blockquote",
        "ul", "ol", "li", "a",
        "table", "thead", "tbody", "tr", "th", "td",
    }
)  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
#: Schemes a link may use; anything else (``javascript:``, ``data:``, ``vbscript:``) is dropped.
LINK_SCHEMES = frozenset({"http", "https", "mailto"})

#: Values longer than this (characters or lines) are folded behind "show more".
FOLD_CHARS = 1_500
FOLD_LINES = 24
#: Longer texts are not diffed (difflib is quadratic in the worst case).
DIFF_MAX_CHARS = 20_000

# Characters that can start Markdown syntax. Text with none of them renders to plain
# paragraphs, which :func:`plain_html` produces directly (a measured 20x faster per piece).
_MARKUP_RE = re.compile(r"[*_`#\[\]!<>|~\\&]|^\s*(?:[-+=]|\d+[.)])|^ {4}|\t", re.MULTILINE)


def _absolute_link(tag: str, attribute: str, value: str) -> str | None:
    """nh3 attribute filter: links must be absolute http(s)/mailto URLs.

    nh3 already drops other schemes; relative links are dropped here too, so stored content
    cannot point a reviewer at one of Redline's own URLs (``/admin/…``) in disguise.
    """
    if tag == "a" and attribute == "href":
        scheme = value.split(":", 1)[0].strip().lower() if ":" in value else ""
        return value if scheme in LINK_SCHEMES else None
    return value


_CLEANER = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
    url_schemes=set(LINK_SCHEMES),
    attribute_filter=_absolute_link,
    link_rel="nofollow noopener noreferrer",
    strip_comments=True,
)


def sanitize_html(fragment: str) -> str:
    """Clean an HTML fragment against the allow-list (tags, attributes, link schemes)."""
    return _CLEANER.clean(fragment)


def _render_image_as_link(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """Markdown images become a link to the image, so nothing loads from a third party."""
    token = tokens[idx]
    src = token.attrGet("src") or ""
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    return f'<a href="{html.escape(str(src))}">[image: {html.escape(alt)}]</a>'


def _markdown() -> MarkdownIt:
    md = MarkdownIt(
        "commonmark", {"html": False, "breaks": True, "linkify": False, "typographer": False}
    )
    md.enable(["table", "strikethrough"])
    md.add_render_rule("image", _render_image_as_link)
    return md


_MD = _markdown()


def has_markup(text: str) -> bool:
    """Whether ``text`` may contain Markdown syntax (a cheap, conservative check)."""
    return bool(_MARKUP_RE.search(text))


def plain_html(text: str) -> str:
    """Escaped paragraphs with line breaks: what Markdown makes of text without markup."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return "".join(
        "<p>"
        + "<br>\n".join(html.escape(line.strip(), quote=False) for line in p.splitlines())
        + "</p>\n"
        for p in paragraphs
    )


@lru_cache(maxsize=8192)
def render_markdown(text: str) -> str:
    """Markdown → sanitised HTML. Raw HTML in ``text`` is shown as text, never interpreted.

    Cached by value: system prompts and refusals repeat across conversations.
    """
    if not has_markup(text):
        return plain_html(text)
    return sanitize_html(_MD.render(text))


def is_long(text: str) -> bool:
    """Whether a value is long enough to be folded behind "show more"."""
    return len(text) > FOLD_CHARS or text.count("\n") >= FOLD_LINES


@dataclass(frozen=True, slots=True)
class Diff:
    """A word-level diff of two texts, as escaped HTML with ``<ins>``/``<del>`` marks."""

    html: str
    ratio: float
    too_long: bool = False


# Words and runs of whitespace; a word is everything between spaces, so "p4ssword," is one
# changed token rather than a scatter of letters.
_TOKEN_RE = re.compile(r"\s+|\S+")
#: Below this similarity (difflib's cheap upper bound) the texts are not diffed word by word:
#: a converter such as Base64 or ROT13 rewrote everything and a diff would say nothing.
REWRITE_RATIO = 0.2


def text_diff(original: str, converted: str) -> Diff:
    """Diff ``original`` against ``converted`` word by word; every piece of text is escaped.

    ``ratio`` is difflib's similarity (1.0 = equal). Texts whose quick upper bound is under
    :data:`REWRITE_RATIO` get no word diff (``html`` empty): the page says the converter
    rewrote the whole text. That check is linear, the word diff is not.
    """
    if len(original) + len(converted) > DIFF_MAX_CHARS:
        return Diff(html="", ratio=0.0, too_long=True)
    a = _TOKEN_RE.findall(original)
    b = _TOKEN_RE.findall(converted)
    # Similarity of the words alone: shared spaces would make any two texts look alike.
    words = difflib.SequenceMatcher(None, original.split(), converted.split(), autojunk=False)
    if words.quick_ratio() < REWRITE_RATIO:
        return Diff(html="", ratio=words.quick_ratio())
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out: list[str] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            out.append(html.escape("".join(a[a0:a1])))
            continue
        if op in ("delete", "replace"):
            out.append(f"<del>{html.escape(''.join(a[a0:a1]))}</del>")
        if op in ("insert", "replace"):
            out.append(f"<ins>{html.escape(''.join(b[b0:b1]))}</ins>")
    return Diff(html="".join(out), ratio=words.ratio())


def highlight_snippet(text: str, query: str, *, width: int = 200) -> str:
    """Escaped HTML of ``text`` cut to about ``width`` characters around the first match of
    ``query`` (case-insensitive), every match in the cut wrapped in ``<mark>``.

    Long texts are cut so the match is visible, with an ellipsis on the cut sides; a text
    without a match is cut from its start.
    """
    if not query:
        return html.escape(text[:width])
    pattern = re.compile(re.escape(query), re.IGNORECASE)
    first = pattern.search(text)
    start = 0
    if first is not None and first.end() > width:
        start = max(0, first.start() - width // 3)
    end = min(len(text), start + width)
    window = text[start:end]
    parts = []
    cursor = 0
    for match in pattern.finditer(window):
        parts.append(html.escape(window[cursor : match.start()]))
        parts.append(f"<mark>{html.escape(match.group(0))}</mark>")
        cursor = match.end()
    parts.append(html.escape(window[cursor:]))
    return ("…" if start else "") + "".join(parts) + ("…" if end < len(text) else "")
