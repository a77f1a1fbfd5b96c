"""What ingestion announces, after its transaction commits.

Receivers (the webhooks, ``memory.findings.webhooks``) connect to these signals; they run only
once the batch is committed, so a refused or rolled-back batch announces nothing. A batch sends
one signal for all its attacks, never one per attack: a 10,000-attack import is one call.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from django.db import transaction
from django.dispatch import Signal

from memory.models import AttackResult

#: ``attack_ids`` (a list of ``AttackResult`` ids) were stored with outcome success, or changed
#: to it, by one ingested batch.
attacks_succeeded = Signal()


def attacks_succeeded_after_commit(attack_ids: Sequence[uuid.UUID]) -> None:
    """Announce ``attack_ids`` once the current transaction commits (nothing when empty)."""
    if not attack_ids:
        return
    ids = list(attack_ids)
    transaction.on_commit(lambda: attacks_succeeded.send(sender=AttackResult, attack_ids=ids))
