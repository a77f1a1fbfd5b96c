"""The shipped gunicorn settings load, take their values from the environment, and start a
server that answers."""

from __future__ import annotations

import importlib
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_settings_follow_the_environment(monkeypatch):
    monkeypatch.setenv("WEB_CONCURRENCY", "3")
    monkeypatch.setenv("GUNICORN_TIMEOUT", "77")
    import redteam.gunicorn_conf as conf

    conf = importlib.reload(conf)
    assert (conf.workers, conf.timeout) == (3, 77)
    assert conf.max_requests > 0 and conf.max_requests_jitter > 0


def test_gunicorn_starts_with_them(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        "PATH": "/usr/bin:/bin",
        "REDLINE_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
        "WEB_CONCURRENCY": "1",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "DEBUG": "1",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "python:redteam.gunicorn_conf", "redteam.wsgi"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    assert r.status == 200
                    break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode()
                assert time.monotonic() < deadline, "gunicorn did not answer"
                time.sleep(0.2)
    finally:
        server.terminate()
        server.wait(timeout=30)
