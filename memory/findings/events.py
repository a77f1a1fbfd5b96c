"""What happens to findings, announced inside the transaction that makes the change.

Receivers (the webhooks, ``memory.findings.webhooks``) connect to these signals. They run in
the caller's transaction, so what they record (a webhook delivery) commits with the change or
not at all: a rolled-back change announces nothing, and a crash cannot keep the change but
lose its announcement. Receivers must be quick and must not talk to the network.
"""

from __future__ import annotations

from django.dispatch import Signal

from memory.models import Finding

#: ``finding`` was created.
created = Signal()
#: ``finding`` moved from ``previous`` to its current status.
status_changed = Signal()


def finding_created(finding: Finding) -> None:
    """Announce that ``finding`` was created (call it in the transaction that saved it)."""
    created.send(sender=Finding, finding=finding)


def finding_status_changed(finding: Finding, previous: str) -> None:
    """Announce that ``finding`` left status ``previous`` (in the transaction that saved it)."""
    status_changed.send(sender=Finding, finding=finding, previous=previous)
