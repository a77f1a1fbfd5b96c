"""What happens to findings, announced after the transaction commits.

Receivers (the webhooks, ``memory.findings.webhooks``) connect to these signals; they run only
once the change is committed, so a rolled-back change announces nothing.
"""

from __future__ import annotations

from django.db import transaction
from django.dispatch import Signal

from memory.models import Finding

#: ``finding`` was created.
created = Signal()
#: ``finding`` moved from ``previous`` to its current status.
status_changed = Signal()


def finding_created(finding: Finding) -> None:
    transaction.on_commit(lambda: created.send(sender=Finding, finding=finding))


def finding_status_changed(finding: Finding, previous: str) -> None:
    transaction.on_commit(
        lambda: status_changed.send(sender=Finding, finding=finding, previous=previous)
    )
