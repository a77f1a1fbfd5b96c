"""Untrusted text (target responses, objectives, names) in Markdown files that people paste into
GitHub, GitLab or Jira: it must render as the text it is, never as markup.

Two ways in, one for blocks and one for inline use:

- :func:`md_fence` puts text in a fenced code block whose fence is longer than any backtick run
  inside it, so nothing inside can end the block; a code block renders no HTML, no link, no
  image and no autolink.
- :func:`md_inline` flattens text to one line and backslash-escapes every ASCII punctuation
  character (CommonMark lets each be escaped), so no ``<tag>``, ``[link](…)``, ``![image](…)``,
  ``&entity;``, emphasis, heading or table pipe survives; ``://`` and ``www.`` are broken with
  an escaped character so GFM's autolinks do not turn a bare URL into a link.

Never emit an untrusted URL as a link target or an image source: link to Redline's own page.
"""

from __future__ import annotations

import re

__all__ = ["md_code", "md_fence", "md_inline"]

_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_BACKTICKS = re.compile(r"`+")


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)


def md_fence(text: str, *, indent: str = "") -> str:
    """``text`` as a fenced code block (info string ``text``), each line prefixed with
    ``indent`` (to sit inside a list item)."""
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    lines = [f"{fence}text", *text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), fence]
    return "\n".join(indent + line if line else line for line in lines)


def md_inline(text: object) -> str:
    """``text`` as one line of plain Markdown text: whitespace runs (line breaks too) become one
    space, every ASCII punctuation character is backslash-escaped, bare URLs are not linked."""
    flat = " ".join(str(text if text is not None else "").split())
    escaped = _PUNCTUATION.sub(r"\\\1", flat)
    # GitHub's renderer links no escaped URL, but other extended-autolink renderers may match
    # "www." and "scheme://" in text: a zero-width space there keeps the text readable and
    # unlinked everywhere.
    escaped = re.sub(r"(?i)(www)(\\\.)", "\\1\u200b\\2", escaped)
    return re.sub(r"(?i)([a-z])(\\:\\/\\/)", "\\1\u200b\\2", escaped)


def md_code(text: object) -> str:
    """``text`` as an inline code span (one line) delimited by more backticks than it holds."""
    flat = " ".join(str(text if text is not None else "").split())
    ticks = "`" * (_longest_backtick_run(flat) + 1)
    # CommonMark strips one space each side: padding only where a backtick touches the fence.
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}" if flat else ""
