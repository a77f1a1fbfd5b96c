"""SQLite runs in WAL mode with IMMEDIATE transactions, so concurrent writers queue, not fail."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections, transaction

from memory.models import Label

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="SQLite-specific settings; PostgreSQL has no such mode"
)


@pytest.mark.django_db
def test_sqlite_connection_uses_wal_and_a_busy_timeout():
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
        cursor.execute("PRAGMA busy_timeout")
        assert cursor.fetchone()[0] >= 5000
        cursor.execute("PRAGMA wal_autocheckpoint")
        assert cursor.fetchone()[0] == 10_000
    assert connection.settings_dict["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    # Kept between requests: a new connection per request re-parsed the schema and
    # checkpointed the WAL on close (docs/performance.md, "Ingestion API").
    assert connection.settings_dict["CONN_MAX_AGE"] > 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_read_then_write_transactions_do_not_fail():
    """Each transaction reads, then writes: with DEFERRED transactions two such writers
    deadlock on the lock upgrade and one fails at once with "database is locked"."""
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def writer(worker: int) -> None:
        try:
            start.wait()
            for i in range(25):
                with transaction.atomic():
                    Label.objects.filter(key="k").count()
                    Label.objects.create(key="k", value=f"{worker}-{i}")
        except BaseException as exc:  # any failure is the finding
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert Label.objects.filter(key="k").count() == 100
