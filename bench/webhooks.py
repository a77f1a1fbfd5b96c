"""Webhook benchmark: what ``attack.succeeded`` costs ingestion, and how fast the worker sends.

In one process (Django's ORM, no HTTP server for Redline), on a fresh database per engine:

1. **Ingestion with and without a subscribed endpoint.** Ingests ``2 * --batches`` batches of
   ``--attacks`` attack results (each with a two-piece conversation and its scores, a third of
   them successes), every other one with three endpoints subscribed to ``attack.succeeded``,
   and prints attacks/s of both and their ratio: the cost of queuing the deliveries after each
   batch commits (one bulk INSERT a batch).
2. **The worker against a local receiver.** Sends ``--deliveries`` queued deliveries to an
   HTTP server on 127.0.0.1 with ``webhook_deliveries_send_due`` passes, and prints
   deliveries/s against the floor: the same number of bare ``http.client`` POSTs of the same
   body to the same server, with no database, signing or bookkeeping.

Plus the calibration loop of docs/performance.md. Usage::

    .venv/bin/python bench/webhooks.py                       # SQLite and PostgreSQL
    .venv/bin/python bench/webhooks.py --databases sqlite --batches 3 --attacks 500
"""

from __future__ import annotations

import argparse
import http.client
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import database_url  # noqa: E402
from bench.payloads import batch  # noqa: E402


class _Ok(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def calibration() -> str:
    """The machine's speed now (docs/performance.md, "The machine")."""
    out = subprocess.run(
        [sys.executable, "-m", "timeit", "sum(i*i for i in range(2_000_000))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def child(args: argparse.Namespace) -> None:
    """One engine's run, in a process of its own (Django is configured once per process)."""
    from bench.common import django_in_process

    vendor = django_in_process()
    import logging

    # one INFO line per delivery would drown the figures
    logging.getLogger("memory.findings.webhooks").setLevel(logging.WARNING)
    from django.conf import settings
    from django.utils import timezone

    from memory.findings.webhooks import payloads
    from memory.findings.webhooks.services import (
        PASS_SIZE,
        webhook_deliveries_queue,
        webhook_deliveries_send_due,
    )
    from memory.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
    from memory.transfer.ingest.service import ingest

    # Warm-up (identifiers, imports), not counted.
    ingest(payload=batch(10_000, conversations=50, turns=2))
    for name in ("a", "b", "c"):
        WebhookEndpoint.objects.create(
            name=name,
            url="https://hooks.example.org/",
            secret="bench-secret-0123456789",
            events=[WebhookEvent.ATTACK_SUCCEEDED],
        )
    # Batches with and without the endpoints alternate, so the database's growth and the
    # machine's drift weigh on both alike.
    seconds = {False: 0.0, True: 0.0}
    attacks = {False: 0, True: 0}
    for index in range(2 * args.batches):
        hooked = index % 2 == 1
        WebhookEndpoint.objects.update(active=hooked)
        payload = batch(index, conversations=args.attacks, turns=2)
        started = time.perf_counter()
        assert ingest(payload=payload).ok
        seconds[hooked] += time.perf_counter() - started
        attacks[hooked] += len(payload["attack_results"])
    queued = WebhookDelivery.objects.count()
    bare, hooked = attacks[False] / seconds[False], attacks[True] / seconds[True]
    print(
        f"{vendor}: ingest {attacks[False]:,} + {attacks[True]:,} attacks in alternating batches, "
        f"no endpoint: {bare:,.0f} attacks/s; 3 endpoints subscribed: {hooked:,.0f} attacks/s "
        f"({queued:,} deliveries queued) — ratio {hooked / bare:.2f} of the speed without"
    )

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True
    WebhookDelivery.objects.all().delete()
    WebhookEndpoint.objects.update(active=False)
    target = WebhookEndpoint.objects.create(name="local", url=url, secret="s" * 24, events=[])
    now = timezone.now()
    items = [payloads.ping_data() for _ in range(args.deliveries)]
    webhook_deliveries_queue(event=WebhookEvent.PING, endpoints=[target], items=items, now=now)
    body = payloads.body(payload=WebhookDelivery.objects.first().payload, fmt="json")
    started = time.perf_counter()
    sent = 0
    while True:
        done = sum(webhook_deliveries_send_due(limit=PASS_SIZE).values())
        sent += done
        if done < PASS_SIZE:
            break
    worker_s = time.perf_counter() - started
    assert sent == args.deliveries, sent
    started = time.perf_counter()
    for _ in range(args.deliveries):
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5)
        conn.request("POST", "/hook", body=body, headers={"Content-Type": "application/json"})
        conn.getresponse().read()
        conn.close()
    floor_s = time.perf_counter() - started
    server.shutdown()
    print(
        f"{vendor}: worker {sent} deliveries: {sent / worker_s:,.0f}/s; bare POSTs (floor): "
        f"{sent / floor_s:,.0f}/s — ratio {floor_s / worker_s:.2f} of the floor"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--attacks", type=int, default=1000, help="attack results per batch")
    parser.add_argument("--deliveries", type=int, default=1000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    print("calibration:", calibration())
    for database in args.databases.split(","):
        with tempfile.TemporaryDirectory() as folder:
            url = database_url(database, folder=folder, pg_name="redline_bench_webhooks")
            if url is None:
                continue
            env = {**os.environ, "DATABASE_URL": url, "MEDIA_ROOT": f"{folder}/media"}
            subprocess.run(
                [sys.executable, __file__, *sys.argv[1:], "--child", database],
                env=env,
                check=True,
            )
    print("calibration:", calibration())


if __name__ == "__main__":
    main()
