"""The API's default pagination."""

from __future__ import annotations

from rest_framework import pagination

#: The largest page any list endpoint returns, whatever ``limit`` asks for.
MAX_PAGE_SIZE = 1000


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    """Limit/offset pages with ``limit`` capped at :data:`MAX_PAGE_SIZE`, as on the cursor
    endpoints.

    DRF's own class has no cap: a ``limit`` beyond 64 bits reached the database, where SQLite
    refuses it ("datatype mismatch") and PostgreSQL overflows its bigint, so the request
    failed with a 500. A larger ``limit`` is clamped, not refused, like the cursor pages. (An
    ``offset`` past the end is answered with an empty page before any query is sliced.)
    """

    max_limit = MAX_PAGE_SIZE
