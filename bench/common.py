"""What the benchmark scripts share: the PostgreSQL server they use and scratch databases on it."""

from __future__ import annotations

import os
import sys

#: The server the benchmarks create their scratch databases on (``BENCH_PG_URL`` overrides).
PG_URL = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def pg_database(name: str, *, fresh: bool = True, create: bool = True) -> str | None:
    """The URL of scratch database ``name`` on ``PG_URL``; None when PostgreSQL is unreachable.

    ``fresh`` drops it first; ``create`` creates it when missing, so ``fresh=False`` reuses a
    kept database and ``create=False`` (with ``fresh``) only drops one.
    """
    try:
        import psycopg

        with psycopg.connect(PG_URL, autocommit=True, connect_timeout=3) as conn:
            if fresh:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
            if create and not exists:
                conn.execute(f'CREATE DATABASE "{name}"')
    except Exception as exc:
        print(f"PostgreSQL unavailable ({exc}); skipped", file=sys.stderr)
        return None
    return PG_URL.rsplit("/", 1)[0] + f"/{name}"


def django_in_process(*, media_root: str | None = None) -> str:
    """Set Django up for requests made in this process (the test client), migrated.

    Any host, plain HTTP, no debug, and static files without a collectstatic manifest.
    Returns the database vendor (``sqlite`` or ``postgresql``).
    """
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "redteam.settings")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    settings.ALLOWED_HOSTS = ["*"]
    settings.SECURE_SSL_REDIRECT = False
    settings.DEBUG = False
    if media_root is not None:
        settings.MEDIA_ROOT = media_root
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    call_command("migrate", verbosity=0)
    return connection.vendor


def database_url(database: str, *, folder: str, pg_name: str) -> str | None:
    """The ``DATABASE_URL`` of a scratch database: a SQLite file in ``folder``, or a fresh
    PostgreSQL database ``pg_name``; None when PostgreSQL is unreachable."""
    if database == "sqlite":
        return f"sqlite:///{folder}/bench.sqlite3"
    return pg_database(pg_name)
