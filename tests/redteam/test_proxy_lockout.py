"""The login lockout and the client's address behind a reverse proxy (docs/deployment.md).

The end-to-end test starts the app under gunicorn (the shipped ``redteam.gunicorn_conf``) and
a small HTTP proxy in front of it on loopback that appends the connecting address to
``X-Forwarded-For``, as nginx's ``proxy_add_x_forwarded_for`` does. Loopback has a whole /8,
so the "attacker" and the "owner" connect from different addresses (127.0.0.2, 127.0.0.3).
"""

from __future__ import annotations

import http.client
import re
import socket
import subprocess
import sys
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

import pytest
from axes.models import AccessAttempt
from django.core.management import call_command
from django.db import connection
from django.test import Client, RequestFactory
from django.utils import timezone
from rest_framework.request import Request

from redteam.proxies import client_address
from redteam.throttling import TokenRateThrottle

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "right-password-1"
ATTACKER, OWNER, DIRECT = "127.0.0.2", "127.0.0.3", "127.0.0.5"


# --- the address ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "trusted, remote, forwarded, expected",
    [
        # no proxy configured: the header is never read
        ([], "127.0.0.1", "203.0.113.9", "127.0.0.1"),
        # a client that is not a trusted proxy: its header is ignored
        (["10.0.0.1"], "198.51.100.7", "203.0.113.9", "198.51.100.7"),
        # one trusted proxy: the entry it appended, not what the client wrote before it
        (["10.0.0.1"], "10.0.0.1", "203.0.113.9, 198.51.100.7", "198.51.100.7"),
        # a chain of trusted proxies (a network) is skipped from the right
        (["10.0.0.0/8"], "10.0.0.1", "6.6.6.6, 198.51.100.7, 10.2.3.4", "198.51.100.7"),
        # IPv6, bracketed with a port, and an IPv4 with a port
        (["::1"], "::1", "[2001:db8::7]:4711", "2001:db8::7"),
        (["127.0.0.1"], "127.0.0.1", "198.51.100.7:4711", "198.51.100.7"),
        # garbage where the proxy's entry should be: the proxy itself
        (["10.0.0.1"], "10.0.0.1", "not-an-address", "10.0.0.1"),
        # nothing forwarded
        (["10.0.0.1"], "10.0.0.1", "", "10.0.0.1"),
    ],
)
def test_the_client_address_is_read_from_trusted_proxies_only(
    settings, trusted, remote, forwarded, expected
):
    settings.REDLINE_TRUSTED_PROXIES = trusted
    request = RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == expected


def test_the_api_rate_limit_counts_anonymous_clients_by_the_same_address(settings):
    settings.REDLINE_TRUSTED_PROXIES = ["10.0.0.1"]
    factory = RequestFactory()
    throttle = TokenRateThrottle()
    forged = factory.get("/", REMOTE_ADDR="198.51.100.7", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert throttle.get_ident(Request(forged)) == "198.51.100.7"
    proxied = factory.get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.9")
    assert throttle.get_ident(Request(proxied)) == "203.0.113.9"


# --- lockout: cool-down and unlock ---------------------------------------------------------------


def _fail(client, times, username="vic"):
    return [
        client.post("/login/", {"username": username, "password": "wrong"}).status_code
        for _ in range(times)
    ]


@pytest.mark.django_db
def test_a_lockout_ends_after_the_cool_down(django_user_model, settings):
    settings.AXES_FAILURE_LIMIT = 3
    django_user_model.objects.create_user("vic", password=PASSWORD)
    client = Client()
    assert _fail(client, 3)[-1] == 429
    assert client.post("/login/", {"username": "vic", "password": PASSWORD}).status_code == 429
    # the last failure was longer ago than the cool-down
    AccessAttempt.objects.update(
        attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    )
    assert client.post("/login/", {"username": "vic", "password": PASSWORD}).status_code == 302


@pytest.mark.django_db
def test_an_administrator_unlocks_a_user_early(django_user_model, settings, admin_client):
    settings.AXES_FAILURE_LIMIT = 3
    django_user_model.objects.create_user("vic", password=PASSWORD)
    client = Client()
    _fail(client, 3)
    assert client.post("/login/", {"username": "vic", "password": PASSWORD}).status_code == 429
    # the admin lists the attempt and deletes it
    attempt = AccessAttempt.objects.get(username="vic")
    listing = admin_client.get("/admin/axes/accessattempt/")
    assert listing.status_code == 200 and "vic" in listing.content.decode()
    response = admin_client.post(
        "/admin/axes/accessattempt/",
        {"action": "delete_selected", "_selected_action": [attempt.pk], "post": "yes"},
    )
    assert response.status_code == 302
    assert client.post("/login/", {"username": "vic", "password": PASSWORD}).status_code == 302
    # and from the command line
    client.logout()
    _fail(client, 3)
    call_command("axes_reset_username", "vic")
    assert client.post("/login/", {"username": "vic", "password": PASSWORD}).status_code == 302


# --- behind a real reverse proxy -----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


def _proxy(upstream: int) -> ThreadingHTTPServer:
    """A reverse proxy on loopback that appends the peer's address to X-Forwarded-For."""

    class Forward(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {
                k: v for k, v in self.headers.items() if k.lower() not in ("connection", "host")
            }
            prior = self.headers.get("X-Forwarded-For")
            peer = self.client_address[0]
            headers["X-Forwarded-For"] = f"{prior}, {peer}" if prior else peer
            headers["Host"] = f"127.0.0.1:{upstream}"
            upstream_connection = http.client.HTTPConnection("127.0.0.1", upstream, timeout=30)
            upstream_connection.request(self.command, self.path, body, headers)
            answer = upstream_connection.getresponse()
            content = answer.read()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in ("connection", "transfer-encoding", "content-length"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)
            upstream_connection.close()

        do_GET = do_POST = _forward

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _login(port: int, source: str, password: str, forwarded: str | None = None) -> int:
    """Log in as vic from ``source`` (the form, its CSRF cookie and token): the status."""
    conn = http.client.HTTPConnection("127.0.0.1", port, source_address=(source, 0), timeout=30)
    extra = {"X-Forwarded-For": forwarded} if forwarded else {}
    try:
        conn.request("GET", "/login/", headers=extra)
        page = conn.getresponse()
        html = page.read().decode()
        cookie = re.search(r"csrftoken=([^;]+)", page.getheader("Set-Cookie") or "").group(1)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
        body = urlencode({"username": "vic", "password": password, "csrfmiddlewaretoken": token})
        headers = {
            "Cookie": f"csrftoken={cookie}",
            "Content-Type": "application/x-www-form-urlencoded",
            **extra,
        }
        conn.request("POST", "/login/", body, headers)
        answer = conn.getresponse()
        answer.read()
        return answer.status
    finally:
        conn.close()


@pytest.fixture
def behind_proxy(tmp_path, django_user_model):
    """gunicorn on a free port trusting 127.0.0.1, and the proxy in front of it: the ports."""
    django_user_model.objects.create_user("vic", password=PASSWORD)
    port = _free_port()
    env = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "tests.redteam.proxy_settings",
        "REDLINE_VAR_DIR": str(tmp_path),
        "DATABASE_URL": _database_url(),
        "DATABASE_CONN_MAX_AGE": "0",
        "SECRET_KEY": "proxy-test-" + "k" * 50,
        "WEB_CONCURRENCY": "1",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_ACCESS_LOG": "/dev/null",
        "DEBUG": "1",
        "REDLINE_TRUSTED_PROXIES": "127.0.0.1",
        "LOGIN_FAILURE_LIMIT": "10",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "python:redteam.gunicorn_conf", "redteam.wsgi"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    proxy = _proxy(port)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode()
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.2)
        yield port, proxy.server_address[1]
    finally:
        proxy.shutdown()
        proxy.server_close()
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.django_db(transaction=True)
def test_behind_a_proxy_an_attacker_cannot_lock_the_owner_out(behind_proxy):
    app, proxy = behind_proxy

    # The attacker fails twelve times through the proxy, naming a new address each time.
    statuses = [
        _login(proxy, ATTACKER, f"wrong-{n}", forwarded=f"198.51.100.{n}") for n in range(12)
    ]
    assert statuses[:9] == [200] * 9
    assert statuses[-1] == 429
    # ... so the forged addresses did not spread the count: the right password is locked too.
    assert _login(proxy, ATTACKER, PASSWORD, forwarded="198.51.100.99") == 429

    # A client that is not the proxy forges the owner's address straight at gunicorn.
    statuses = [_login(app, DIRECT, "wrong", forwarded=OWNER) for _ in range(12)]
    assert statuses[-1] == 429

    # The owner, through the proxy from elsewhere, logs in.
    assert _login(proxy, OWNER, PASSWORD) == 302

    # The lockout counted the real addresses, never the proxy's or a forged one.
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {ATTACKER, DIRECT}
