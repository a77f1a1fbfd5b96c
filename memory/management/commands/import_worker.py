"""``manage.py import_worker``: the background worker of browser imports, safe to restart.

It first queues again the imports a stopped worker left running (killed, crashed, the machine
restarted), then runs django-tasks' ``db_worker`` with the arguments given.
"""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand

from memory.transfer.uploads.services import import_jobs_resume


class Command(BaseCommand):
    help = (
        "Resume imports a stopped worker left running, then run the task worker "
        "(arguments after -- go to db_worker, e.g. -- --batch)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("worker_args", nargs=argparse.REMAINDER)

    def handle(self, *args: Any, worker_args: list[str], **options: Any) -> None:
        for job in import_jobs_resume():
            self.stdout.write(
                f"resumed import {job.pk} ({job.source_name}) left by a stopped worker"
            )
        if worker_args[:1] == ["--"]:
            worker_args = worker_args[1:]
        call_command("db_worker", *worker_args)
