"""``manage.py deliver_webhooks``: send the webhook deliveries that are due (docs/webhooks.md).

Once by default (a cron job every minute will do); ``--loop`` keeps polling, which is how
``./dev.sh up`` runs it beside the development server. Several workers may run at once: each
pass claims its deliveries, so none is sent twice.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django import db
from django.core.management.base import BaseCommand
from django.db import DatabaseError

from memory.findings.webhooks.services import PASS_SIZE, webhook_deliveries_send_due

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Send due webhook deliveries once, or keep doing so with --loop."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--loop", action="store_true", help="keep running, polling every --interval seconds"
        )
        parser.add_argument(
            "--interval",
            type=float,
            default=2.0,
            help="seconds between polls when nothing was due (default 2)",
        )

    def handle(self, *args: Any, loop: bool, interval: float, **options: Any) -> None:
        while True:
            if not loop:
                counts = webhook_deliveries_send_due()
            else:
                # A lost database connection (a restart, a failover) must not end the loop:
                # log it, drop the connection, and connect afresh on the next pass.
                try:
                    counts = webhook_deliveries_send_due()
                except DatabaseError:
                    logger.exception("webhook pass failed; retrying in %s s", interval)
                    db.connections.close_all()
                    time.sleep(interval)
                    continue
            sent = sum(counts.values())
            if sent:
                summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
                self.stdout.write(f"{sent} sent: {summary}")
            if not loop:
                return
            # a full pass means more may be due: go again at once
            if sent < PASS_SIZE:
                time.sleep(interval)
