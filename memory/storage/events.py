"""What ingestion announces, inside the transaction that stores it.

Receivers (the webhooks, ``memory.findings.webhooks``) connect to these signals. They run in
the writer's transaction, after its rows are written and before it commits, so whatever they
record (a webhook delivery) commits with the change or not at all: a refused or rolled-back
batch announces nothing, and no crash can keep the change but lose its announcement.
Receivers must therefore be quick and must not talk to the network. A batch sends one signal
for all its attacks, never one per attack: a 10,000-attack import is one call.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from django.dispatch import Signal

from memory.models import AttackResult

#: ``attack_ids`` (a list of ``AttackResult`` ids) were stored with outcome success, or changed
#: to it, by one ingested batch.
attacks_succeeded = Signal()


def attacks_succeeded_announce(attack_ids: Sequence[uuid.UUID]) -> None:
    """Announce ``attack_ids`` to the receivers in the caller's transaction (none: nothing)."""
    if not attack_ids:
        return
    attacks_succeeded.send(sender=AttackResult, attack_ids=list(attack_ids))
