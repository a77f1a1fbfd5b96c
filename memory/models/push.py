"""Where pushed memory came from: the machine and PyRIT database a ``redline-push`` named."""

from __future__ import annotations

import hashlib

from django.db import models

from redteam.core import nul


def push_source_key(host: str, database: str) -> str:
    """The unique key of one (host, database) pair: both may be long, the key is not."""
    return hashlib.sha256(f"{host}\x00{database}".encode("utf-8", "surrogatepass")).hexdigest()


class PushSource(models.Model):
    """One PyRIT memory file that ``redline-push`` ships from one machine.

    ``host`` and ``database`` are what the client sent (its host name and the database's
    path there), recorded as given and never verified. Conversations and attack results that a
    push created point here, so reviewers see where they came from.
    """

    host = nul.CharField(max_length=255)
    database = nul.CharField(max_length=1024)
    key = nul.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_push_at = models.DateTimeField()

    class Meta:
        ordering = ["host", "database"]

    def __str__(self) -> str:
        return f"{self.host}:{self.database}"
