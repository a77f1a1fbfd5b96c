"""Project middleware: NUL characters refused in URLs; a query counter for benchmarks
(``QUERY_COUNT_HEADER=1``, never on by default)."""

from __future__ import annotations

from collections.abc import Callable

from django.db import connections
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

_NUL_MESSAGE = "URLs may not contain null characters (NUL)."


class RejectNulMiddleware:
    """A URL whose path or query string holds a NUL character is a 400.

    No page or endpoint means anything by one, and PostgreSQL refuses NUL in text (a
    ``DataError``, i.e. a 500, wherever such a value reached a filter or a look-up). Form
    fields already refuse it (Django's ``ProhibitNullCharactersValidator``); this covers the
    path and every query parameter before any view runs. The API answers in its own error
    shape, ``{"detail": …}``.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = request.GET
        if "\x00" in request.path or any(
            "\x00" in key or any("\x00" in value for value in query.getlist(key)) for key in query
        ):
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": _NUL_MESSAGE}, status=400)
            return HttpResponseBadRequest(_NUL_MESSAGE, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


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
