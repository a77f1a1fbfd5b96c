"""What the benchmark scripts share: the PostgreSQL server they use and scratch databases on it."""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The server the benchmarks create their scratch databases on (``BENCH_PG_URL`` overrides).
PG_URL = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")
#: How the kept PostgreSQL databases' names start (``BENCH_PG_PREFIX`` overrides).
PG_PREFIX = os.environ.get("BENCH_PG_PREFIX", "redline_bench_")


def calibration_ms() -> float:
    """The machine's speed right now: best of 5 of ``sum(i*i for i in range(2_000_000))`` in
    milliseconds (``python -m timeit``), printed beside every figure of a noisy machine."""
    out = subprocess.run(
        [sys.executable, "-m", "timeit", "sum(i*i for i in range(2_000_000))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    value, unit = out.split("best of")[1].split(":")[1].split()[:2]
    return float(value) * {"sec": 1000.0, "msec": 1.0, "usec": 0.001}[unit]


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


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def manage(env: dict[str, str], *args: str) -> str:
    """Run ``manage.py args`` with ``env``; its standard output."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return result.stdout.strip()


def _wait(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("gunicorn exited early")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not come up")


@dataclass
class Server:
    """A running gunicorn: where it listens, its ingest token, its master's pid."""

    port: int
    token: str
    pid: int


@contextlib.contextmanager
def serving(
    database: str, *, workers: int, env: dict[str, str] | None = None
) -> Iterator[Server | None]:
    """A gunicorn server (production settings, no rate limit) on a scratch ``database``
    (``sqlite`` or ``postgres``), migrated, with a user in the ingest group and its token.
    Yields None when PostgreSQL is unreachable."""
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as tmp:
        server_env = {
            **os.environ,
            "REDLINE_VAR_DIR": tmp,
            "DEBUG": "0",
            "SECRET_KEY": "bench-only-" + "x" * 50,
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0",
            "QUERY_COUNT_HEADER": "1",
            "LOG_LEVEL": "WARNING",
            "SECURITY_LOG_LEVEL": "WARNING",
            "API_RATE": "",
            **(env or {}),
        }
        pg_name = f"redline_bench_{os.getpid()}"
        url = database_url(database, folder=tmp, pg_name=pg_name)
        if url is None:
            yield None
            return
        server_env["DATABASE_URL"] = url
        try:
            manage(server_env, "migrate", "--verbosity", "0")
            manage(
                server_env,
                "shell",
                "-c",
                "from django.contrib.auth.models import Group, User; "
                "u = User.objects.create_user('bench'); "
                "u.groups.add(Group.objects.get(name='ingest'))",
            )
            token = manage(server_env, "create_api_token", "bench", "--scope", "ingest")
            port = free_port()
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "redteam.wsgi",
                    "--bind",
                    f"127.0.0.1:{port}",
                    "--workers",
                    str(workers),
                    "--timeout",
                    "600",
                    "--log-level",
                    "warning",
                ],
                env=server_env,
                cwd=ROOT,
            )
            try:
                _wait(port, process)
                yield Server(port=port, token=token, pid=process.pid)
            finally:
                process.terminate()
                process.wait(timeout=30)
        finally:
            if database != "sqlite":
                pg_database(pg_name, create=False)


def calibrate() -> str:
    """The machine's speed right now: ``timeit`` of a fixed loop (compare runs by it)."""
    loop = "sum(i*i for i in range(2_000_000))"
    result = subprocess.run(
        [sys.executable, "-m", "timeit", loop], capture_output=True, text=True, check=True
    )
    return f"calibration: python -m timeit {loop!r}: {result.stdout.strip()}"


def kept_database_url(database: str, *, name: str, rebuild: bool = False) -> str | None:
    """The URL of benchmark data kept between runs: ``var/bench-<name>.sqlite3``, or the
    PostgreSQL database ``redline_bench_<name>`` (``-`` as ``_``; ``BENCH_PG_PREFIX`` replaces
    ``redline_bench_``); ``rebuild`` drops it
    first. None when PostgreSQL is unreachable."""
    if database == "sqlite":
        path = ROOT / "var" / f"bench-{name}.sqlite3"
        if rebuild:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        return f"sqlite:///{path}"
    if database in ("postgresql", "postgres"):
        return pg_database(f"{PG_PREFIX}{name.replace('-', '_')}", fresh=rebuild)
    raise SystemExit(f"unknown database {database!r}: sqlite or postgresql")
