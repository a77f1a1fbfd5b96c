"""The API's JSON parser: a body nested too deep for Python's decoder is a 400, not a 500.

Python's JSON decoder recurses once per array or object level and raises ``RecursionError``
near a thousand levels; DRF's parser catches only ``ValueError``, so ``[[[[…]]]]`` five
thousand deep answered 500. Every JSON endpoint parses through this class
(``DEFAULT_PARSER_CLASSES``); ingestion reads its body itself with its own depth limit
(``INGEST_MAX_DEPTH``).
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class JSONBodyParser(JSONParser):
    """DRF's JSON parser, answering a body nested too deep to decode with a 400."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deep") from None
