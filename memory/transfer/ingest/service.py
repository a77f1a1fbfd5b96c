"""Ingest one payload of PyRIT memory JSON: normalise it, then write it through storage."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser

from memory.storage.write import IngestReport, ingest_batch
from memory.transfer.ingest.normalize import normalize_batch
from redteam.core.collector import fewer_collections
from redteam.core.errors import Problem


def ingest(
    *,
    payload: Any,
    partial: bool = False,
    actor: AbstractBaseUser | None = None,
    problems: Iterable[Problem] = (),
) -> IngestReport:
    """Normalise and ingest one payload of any PyRIT shape (contract §9); see
    :func:`memory.storage.write.ingest_batch` for ``partial`` and ``actor``. ``problems`` are
    the caller's own findings (values no database can store), reported with the batch's."""
    started = time.perf_counter()
    with fewer_collections():
        batch, found = normalize_batch(payload)
        return ingest_batch(
            batch=batch,
            problems=[*problems, *found],
            partial=partial,
            started=started,
            list_items=partial,
            actor=actor,
        )
