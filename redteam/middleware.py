"""Opt-in middleware for benchmarks (``QUERY_COUNT_HEADER=1``); never on by default."""

from __future__ import annotations

from collections.abc import Callable

from django.db import connections
from django.http import HttpRequest, HttpResponse


class QueryCountHeaderMiddleware:
    """Adds ``X-Query-Count``: the SQL statements the request ran (``executemany`` = one)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        count = 0

        def counter(execute, sql, params, many, context):
            nonlocal count
            count += 1
            return execute(sql, params, many, context)

        with connections["default"].execute_wrapper(counter):
            response = self.get_response(request)
        response["X-Query-Count"] = str(count)
        return response
