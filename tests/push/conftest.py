"""A live Redline (pytest-django's ``live_server``), a token that may push, and the client."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import FIXTURES_DIR

#: The real PyRIT databases pushed (tests/fixtures/README.md).
DATABASES = {
    "1.1.0": FIXTURES_DIR / "pyrit-1.1.0-small" / "memory.db",
    "0.12.1": FIXTURES_DIR / "pyrit-0.12.1-legacy" / "memory.db",
    "1.2": FIXTURES_DIR / "pyrit-1.2-main" / "memory.db",
}


def copy_database(version: str, tmp_path: Path) -> Path:
    """A private copy of a fixture database with its ``dbdata`` media beside it."""
    source = DATABASES[version]
    folder = tmp_path / f"pyrit-{version}"
    folder.mkdir()
    shutil.copy(source, folder / "memory.db")
    shutil.copytree(source.parent / "dbdata", folder / "dbdata")
    return folder / "memory.db"


def count(db: Path, sql: str) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        return connection.execute(sql).fetchone()[0]


@pytest.fixture(scope="session", autouse=True)
def _plain_http_live_server() -> None:
    """The live server speaks plain HTTP: no redirect to HTTPS (set before ``live_server``,
    session-scoped, builds its handler, as in tests/browser/conftest.py)."""
    from django.conf import settings

    settings.SECURE_SSL_REDIRECT = False


@pytest.fixture
def token(bot) -> str:
    """A plain ingest-scope token of ``bot`` (the ingest group)."""
    from redteam.tokens import api_token_create

    return api_token_create(user=bot, scope="ingest", name="push tests")[1]


@pytest.fixture
def push(live_server, token, tmp_path, capsys):
    """``push(db, *args)`` runs the real ``redline-push`` entry point in this process against
    the live server; returns (exit status, stdout, stderr)."""
    from redline_push.cli import main

    def run(db: Path, *args: str, state: Path | None = None):
        state = state or tmp_path / "push-state.sqlite3"
        status = main(
            ["--url", live_server.url, "--token", token, "--state", str(state), *args, str(db)]
        )
        out = capsys.readouterr()
        return status, out.out, out.err

    return run
