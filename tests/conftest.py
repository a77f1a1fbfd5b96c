"""Shared pytest fixtures: users with different permissions, media in a temp dir, a webhook
receiver."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.test import Client
from django.test.utils import override_settings

#: Real PyRIT output the tests read (see tests/fixtures/README.md).
FIXTURES_DIR = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hashing():
    """Every test hashes passwords with MD5: PBKDF2 took most of the time of a test that
    creates users (one API test file: 141 s with it, 40 s without). Through
    ``override_settings``, so Django's cached list of hashers is reset too."""
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Every test starts with an empty cache: API rate counts and login lockouts live there
    (and in the database), and must not carry over from one test to the next."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _isolated_storage(settings, tmp_path):
    """Media go to a per-test folder; static files need no collectstatic manifest."""
    settings.MEDIA_ROOT = tmp_path / "media"
    # The test client speaks plain HTTP; production redirects it to HTTPS.
    settings.SECURE_SSL_REDIRECT = False
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


def pytest_collection_modifyitems(config, items):
    """Run the browser tests last.

    Playwright's sync API leaves an event loop registered as running in the main thread for
    the rest of the session, and Django then keeps that thread's connections in context-local
    storage; tests that fork worker processes (``tests/ingest/test_concurrency.py``) must run
    before that, while ``connections.close_all()`` still reaches every connection the children
    would inherit. With ``-n`` (pytest-xdist's default ``--dist load``, as ``./dev.sh test``
    runs) every worker collects this same order and is handed its tests front to back, so each
    worker process runs its browser tests after everything else it runs.
    """
    items.sort(key=lambda item: "/tests/browser/" in str(item.path))


# --- Users ------------------------------------------------------------------------------------
# Each user's password is ``pw-<username>-123`` (the browser tests log in as "vera").


def logged_in(user) -> Client:
    """A test client of its own, logged in as ``user``."""
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def superuser(django_user_model):
    """An administrator."""
    return django_user_model.objects.create_superuser(
        username="admin", email="admin@example.org", password="pw-admin-123"
    )


@pytest.fixture
def admin_client(superuser):
    """A test client of its own, logged in as the administrator."""
    return logged_in(superuser)


@pytest.fixture
def reader(django_user_model):
    """A logged-in user with no special permissions."""
    return django_user_model.objects.create_user(username="reader", password="pw-reader-123")


@pytest.fixture
def member(django_user_model):
    """Factory: ``member("viewer", "reviewer", username=...)`` -> a user in those shipped groups.

    Members of a shipped group are staff (``redteam.groups``); other fields of the user, such
    as ``is_staff=True`` for a user in no group, go to ``create_user``.
    """
    from django.contrib.auth.models import Group

    from redteam.groups import ensure_groups

    ensure_groups()

    def make(*groups: str, username: str | None = None, **fields):
        name = username or "-".join(groups) or "nobody"
        user = django_user_model.objects.create_user(
            username=name, password=f"pw-{name}-123", **fields
        )
        user.groups.set(Group.objects.filter(name__in=groups))
        return django_user_model.objects.get(pk=user.pk)  # fresh: is_staff set by the signal

    return make


@pytest.fixture
def viewer(member):
    """Vera, in the ``viewer`` group: reads everything, records nothing."""
    return member("viewer", username="vera")


@pytest.fixture
def reviewer(member):
    """Rita, in the ``reviewer`` group: records human verdicts and scores."""
    return member("reviewer", username="rita")


@pytest.fixture
def curator(member):
    """Cora, in the ``curator`` group: edits seeds in the admin."""
    return member("curator", username="cora")


@pytest.fixture
def ingester(member):
    """Ingrid, in the ``ingest`` group: pushes and imports memory."""
    return member("ingest", username="ingrid")


@pytest.fixture
def bot(member):
    """``bot``, an automation user in the ``ingest`` group (tokens are made for it)."""
    return member("ingest", username="bot")


@pytest.fixture
def viewer_client(viewer):
    """A test client of its own, logged in as the viewer."""
    return logged_in(viewer)


@pytest.fixture
def lead(member):
    """Lena, in the ``lead`` group: a reviewer who also runs review queues and resolves
    disagreements."""
    return member("lead", username="lena")


@pytest.fixture
def ann(member):
    """Ann, a second reviewer (review queues need several)."""
    return member("reviewer", username="ann")


@pytest.fixture
def bob(member):
    """Bob, a third reviewer."""
    return member("reviewer", username="bob")


class WebhookReceiver:
    """A real HTTP server on 127.0.0.1 that records the webhook requests it is sent (path,
    headers, body) and answers each with the next of ``answers`` (status, headers, body), the
    last one repeated."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.answers: list[tuple[int, dict[str, str], bytes]] = [(200, {}, b"ok")]
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                index = min(len(receiver.requests), len(receiver.answers)) - 1
                status, headers, answer = receiver.answers[index]
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/redline?team=red"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook_receiver(settings):
    """A :class:`WebhookReceiver`, with webhooks allowed to post to 127.0.0.1."""
    settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True
    server = WebhookReceiver()
    yield server
    server.close()
