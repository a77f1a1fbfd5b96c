"""Reads on PyRIT memory that need more than one QuerySet."""

from __future__ import annotations

from collections.abc import Iterable

from memory import identifiers as ids
from memory.models import ComponentIdentifier


def identifiers_load(*, hashes: Iterable[str]) -> dict[str, ids.ComponentIdentifier]:
    """Rebuild PyRIT identifiers (with their whole child trees) for the given hashes.

    One query per tree level: children are fetched by the hashes in their parents'
    ``children`` JSON. Hashes that are not stored are left out of the result.
    """
    rows: dict[str, ComponentIdentifier] = {}
    wanted = set(hashes)
    while wanted:
        found = ComponentIdentifier.objects.by_hash(list(wanted))
        rows.update(found)
        wanted = set()
        for row in found.values():
            for value in row.children.values():
                for child_hash in value if isinstance(value, list) else [value]:
                    if child_hash not in rows:
                        wanted.add(child_hash)

    built: dict[str, ids.ComponentIdentifier] = {}

    def build(digest: str) -> ids.ComponentIdentifier:
        if digest not in built:
            row = rows[digest]
            built[digest] = ids.ComponentIdentifier(
                class_name=row.class_name,
                class_module=row.class_module,
                params=row.params,
                children={
                    name: [build(h) for h in value] if isinstance(value, list) else build(value)
                    for name, value in row.children.items()
                },
                attributes=row.attributes,
                pyrit_version=row.pyrit_version,
                eval_hash=row.eval_hash,
                hash=row.hash,
            )
        return built[digest]

    return {digest: build(digest) for digest in rows}
