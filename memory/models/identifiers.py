"""Content-addressed component identifiers (contract §10)."""

from __future__ import annotations

from django.db import models

from redteam.core import nul


class ComponentIdentifierQuerySet(models.QuerySet):
    """Reads on identifiers."""

    def by_hash(self, hashes: list[str]) -> dict[str, ComponentIdentifier]:
        """Map each known hash in ``hashes`` to its row, in one query."""
        return {row.hash: row for row in self.filter(hash__in=hashes)}


class ComponentIdentifier(models.Model):
    """One PyRIT component configuration (target, converter, scorer, attack, seed, scenario…).

    Content-addressed: exactly one row per identifier ``hash``. The hash is PyRIT's, kept
    verbatim even when it does not match the content (PyRIT 0.12 stored hashes of untruncated
    params; 1.1.0 hashes include ``attributes``), so ``content_hash`` records what our own
    hashing of the stored content gives. Children are rows of this table too, referenced by
    hash from ``children`` (``{name: hash | [hash, …]}``, the exact shape that enters the
    parent's hash) and, for joins, by ``ComponentIdentifierChild`` edges.
    """

    hash = nul.CharField(max_length=64, unique=True)
    class_name = nul.CharField(max_length=255)
    class_module = nul.CharField(max_length=255)
    params = nul.JSONField(default=dict, blank=True)
    children = nul.JSONField(default=dict, blank=True)
    attributes = nul.JSONField(default=dict, blank=True)
    eval_hash = nul.CharField(max_length=64, blank=True, null=True)
    pyrit_version = nul.CharField(max_length=32, blank=True, default="")
    content_hash = nul.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ComponentIdentifierQuerySet.as_manager()

    class Meta:
        indexes = [
            # Dashboards group "the same logical configuration" across deployments (§10.7).
            models.Index(fields=["eval_hash"], name="memory_ident_eval_hash_idx"),
            # Filters and breakdowns by attack class / target class / scorer class.
            models.Index(fields=["class_name"], name="memory_ident_class_name_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.class_name}::{self.hash[:8]}"

    @property
    def short_hash(self) -> str:
        """First 8 hex characters of the hash, as PyRIT displays it."""
        return self.hash[:8]


class ComponentIdentifierChild(models.Model):
    """Edge from a parent identifier to a named child (``position`` orders list children)."""

    parent = models.ForeignKey(
        ComponentIdentifier, on_delete=models.CASCADE, related_name="child_edges"
    )
    name = nul.CharField(max_length=128)
    position = models.PositiveIntegerField(default=0)
    is_list = models.BooleanField(default=False)
    child = models.ForeignKey(
        ComponentIdentifier, on_delete=models.PROTECT, related_name="parent_edges"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["parent", "name", "position"],
                name="%(app_label)s_%(class)s_unique_slot",
            ),
            models.CheckConstraint(
                condition=models.Q(is_list=True) | models.Q(position=0),
                name="%(app_label)s_%(class)s_single_child_at_zero",
            ),
        ]
        ordering = ["parent", "name", "position"]
        verbose_name = "component identifier child"
        verbose_name_plural = "component identifier children"

    def __str__(self) -> str:
        return f"{self.parent} → {self.name}[{self.position}] = {self.child}"
