"""Gunicorn settings for production: ``gunicorn -c python:redteam.gunicorn_conf redteam.wsgi``.

Every value can be overridden from the environment (docs/deployment.md, "Running the server").
Sized for Redline's heaviest requests: an ingestion batch at the item limit
(``INGEST_MAX_ITEMS``) and a streamed export.
"""

from __future__ import annotations

import os


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
# Two workers per core: ingestion and pages spend part of their time waiting on the database.
workers = _int("WEB_CONCURRENCY", 2 * (os.cpu_count() or 1))
# A batch at the item limit takes seconds, not minutes; a worker silent longer is stuck.
timeout = _int("GUNICORN_TIMEOUT", 120)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 30)
keepalive = _int("GUNICORN_KEEPALIVE", 5)
# Recycle workers now and then: a large batch grows a worker's heap, which Python keeps.
max_requests = _int("GUNICORN_MAX_REQUESTS", 1000)
max_requests_jitter = _int("GUNICORN_MAX_REQUESTS_JITTER", 100)
# Heartbeat files in memory, not on a disk that may stall.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-")
errorlog = "-"
# Behind a reverse proxy that sets X-Forwarded-Proto (with SECURE_PROXY_SSL=1).
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
