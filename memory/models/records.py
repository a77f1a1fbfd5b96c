"""PyRIT rows Redline has no model for yet, kept verbatim (PyRIT 1.2 operations, findings,
finding evidence, observations, and the tables of a PyRIT newer than Redline knows)."""

from __future__ import annotations

from django.db import models

from redteam.core import nul


class PyritRecord(models.Model):
    """One row of a PyRIT table Redline does not model, exactly as PyRIT stored it.

    ``table`` is PyRIT's table name (``FindingEntries``), ``pk`` the row's primary key as text
    (a JSON array for a composite key, e.g. ``["<observation id>", 0]``; the SQLite rowid for a
    table without one), ``row`` every column by name with the value SQLite returned (JSON columns
    stay the JSON text PyRIT wrote; BLOBs are ``{"$base64": …}``). ``pyrit_version`` is the
    row's own ``pyrit_version`` column when it has one; ``alembic_revision`` the revision of
    the file it came from. Unique on (table, pk): importing the same file again changes nothing,
    a later state of the row replaces it. A later issue maps findings onto a real model; until
    then these rows are shown read-only (admin) and exported as they are.
    """

    table = nul.CharField(max_length=128)
    pk_text = nul.CharField(max_length=512, db_column="pk")
    row = nul.JSONField()
    pyrit_version = nul.CharField(max_length=32, blank=True, default="")
    alembic_revision = nul.CharField(max_length=32, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["table", "pk_text"], name="%(app_label)s_%(class)s_unique_row"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.table} {self.pk_text}"
