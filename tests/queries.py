"""Counting the SQL queries a piece of code runs, for the tests that pin query counts.

``count_queries(fn, *args, **kwargs)`` calls ``fn`` and returns (queries run, its result);
``captured_sql`` returns the statements themselves; ``get_counted(client, url, ...)`` is a GET
that must answer 200. All of them watch the default database connection (pytest-django's
``django_assert_num_queries`` does the same for a block that expects an exact number).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext


def captured_sql[T](fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> tuple[list[str], T]:
    """``fn(*args, **kwargs)``: the SQL of every query it ran, and its result."""
    with CaptureQueriesContext(connection) as queries:
        result = fn(*args, **kwargs)
    return [query["sql"] for query in queries.captured_queries], result


def count_queries[T](fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> tuple[int, T]:
    """``fn(*args, **kwargs)``: the number of queries it ran, and its result."""
    sql, result = captured_sql(fn, *args, **kwargs)
    return len(sql), result


def get_counted(client, url: str, data: Any = None, **extra: Any) -> tuple[int, Any]:
    """``client.get(url, data, **extra)``, which must answer 200: (queries run, response)."""
    count, response = count_queries(client.get, url, data, **extra)
    assert response.status_code == 200, response.content[:2000]
    return count, response
