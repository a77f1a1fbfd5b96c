"""Component identifiers stored content-addressed: one row per hash, children stored once.

The bottom of the write stack for identifiers: the batch writer and the services both call it.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from memory.models import ComponentIdentifier, ComponentIdentifierChild
from redteam.core import identifiers as ids


def _collect(identifier: ids.ComponentIdentifier, out: dict[str, ids.ComponentIdentifier]) -> None:
    """Post-order walk: children before parents, first occurrence of a hash wins."""
    for child in identifier.children.values():
        for node in child if isinstance(child, list) else [child]:
            _collect(node, out)
    out.setdefault(identifier.hash, identifier)


def identifiers_store(
    *, identifiers: Iterable[ids.ComponentIdentifier | None]
) -> dict[str, ComponentIdentifier]:
    """Store identifier trees content-addressed and map every hash in them to its row.

    Rows that already exist are reused untouched (the first content stored under a hash is
    kept: later copies differ at most by truncation). Three queries for any number of trees.
    """
    nodes: dict[str, ids.ComponentIdentifier] = {}
    for identifier in identifiers:
        if identifier is not None:
            _collect(identifier, nodes)
    if not nodes:
        return {}
    with transaction.atomic():
        existing = set(
            ComponentIdentifier.objects.filter(hash__in=nodes).values_list("hash", flat=True)
        )
        new = [node for h, node in nodes.items() if h not in existing]
        ComponentIdentifier.objects.bulk_create(
            [
                ComponentIdentifier(
                    hash=node.hash,
                    class_name=node.class_name,
                    class_module=node.class_module,
                    params=node.params,
                    children=node.hash_dict().get("children", {}),
                    attributes=node.attributes,
                    eval_hash=node.eval_hash,
                    pyrit_version=node.pyrit_version or "",
                    content_hash=node.content_hash(),
                )
                for node in new
            ],
            ignore_conflicts=True,
            batch_size=500,
        )
        rows = ComponentIdentifier.objects.by_hash(list(nodes))
        edges = []
        for node in new:
            for name, child in node.children.items():
                is_list = isinstance(child, list)
                for position, item in enumerate(child if is_list else [child]):
                    edges.append(
                        ComponentIdentifierChild(
                            parent=rows[node.hash],
                            name=name,
                            position=position,
                            is_list=is_list,
                            child=rows[item.hash],
                        )
                    )
        ComponentIdentifierChild.objects.bulk_create(edges, ignore_conflicts=True, batch_size=500)
    return rows


def identifier_store(*, identifier: ids.ComponentIdentifier) -> ComponentIdentifier:
    """Store one identifier tree and return its root row."""
    return identifiers_store(identifiers=[identifier])[identifier.hash]
