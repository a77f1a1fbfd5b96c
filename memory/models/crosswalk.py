"""The framework crosswalk: PyRIT harm categories and attack techniques mapped to framework
entries (OWASP Top 10 for LLM Applications 2025, MITRE ATLAS, NIST AI 600-1).

Shipped as a versioned data file (``memory/storage/crosswalk.yaml``), loaded by a data
migration and by ``manage.py load_crosswalk``, and editable in the admin. A finding's framework
tag is an entry's ``tag``: ``<framework key>:<entry code>`` (``owasp-llm:LLM01``,
``atlas:AML.T0051``, ``nist-ai-600-1:confabulation``).
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from redteam.core import nul
from redteam.core.constraints import choice_check


class CrosswalkSourceKind(models.TextChoices):
    """What a mapping row maps from."""

    HARM_CATEGORY = "harm_category", "Harm category"
    ATTACK_TECHNIQUE = "attack_technique", "Attack technique (attack class)"


class CrosswalkOrigin(models.TextChoices):
    """Where a mapping row came from."""

    SHIPPED = "shipped", "Shipped"
    ADMIN = "admin", "Added in the admin"


class Framework(models.Model):
    """A framework the crosswalk maps to (OWASP LLM Top 10 2025, MITRE ATLAS, NIST AI 600-1).

    ``edited``: changed in the admin, so loading the shipped data leaves its name alone.
    """

    key = nul.CharField(max_length=32, unique=True, help_text="The tag prefix, e.g. owasp-llm.")
    name = nul.CharField(max_length=128)
    edition = nul.CharField(max_length=32, blank=True, default="")
    url = models.URLField(blank=True, default="")
    position = models.PositiveSmallIntegerField(default=0)
    edited = models.BooleanField(default=False)

    class Meta:
        ordering = ["position", "key"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(key="") & ~models.Q(key__contains=":"),
                name="%(app_label)s_%(class)s_key_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.edition}".strip()


class FrameworkEntry(models.Model):
    """One entry of a framework: an OWASP category, an ATLAS technique, a NIST risk.

    Its tag (``tag``, stored so tags are looked up by one indexed column) is what findings
    carry in ``framework_tags``.
    """

    framework = models.ForeignKey(Framework, on_delete=models.CASCADE, related_name="entries")
    code = nul.CharField(max_length=64, help_text="LLM01, AML.T0051, confabulation …")
    tag = nul.CharField(max_length=100, unique=True, editable=False)
    title = nul.CharField(max_length=255)
    url = models.URLField(blank=True, default="")
    position = models.PositiveSmallIntegerField(default=0)
    edited = models.BooleanField(default=False)

    class Meta:
        ordering = ["framework__position", "position", "code"]
        verbose_name_plural = "framework entries"
        constraints = [
            models.UniqueConstraint(
                fields=["framework", "code"], name="%(app_label)s_%(class)s_unique_code"
            ),
            models.CheckConstraint(
                condition=~models.Q(code="") & ~models.Q(title=""),
                name="%(app_label)s_%(class)s_code_title_required",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tag} {self.title}"

    def save(self, *args, **kwargs) -> None:
        self.tag = f"{self.framework.key}:{self.code}"
        super().save(*args, **kwargs)


class CrosswalkMapping(models.Model):
    """One row of the crosswalk: a harm category or attack class maps to a framework entry.

    ``source_value`` is matched case-insensitively (PyRIT writes harm categories as enum names,
    enum values or dataset strings; the shipped data lists each spelling). ``origin`` and
    ``edited`` decide what loading the shipped data may change: shipped rows not edited in
    the admin follow the data file; edited and admin-made rows are left alone. ``active``
    switches a row off without deleting it, so a reload does not bring it back.
    """

    source_kind = nul.CharField(max_length=32, choices=CrosswalkSourceKind.choices)
    source_value = nul.CharField(max_length=255)
    entry = models.ForeignKey(FrameworkEntry, on_delete=models.CASCADE, related_name="mappings")
    active = models.BooleanField(default=True)
    origin = nul.CharField(
        max_length=16, choices=CrosswalkOrigin.choices, default=CrosswalkOrigin.ADMIN
    )
    edited = models.BooleanField(default=False)
    shipped_version = nul.CharField(max_length=32, blank=True, default="")
    note = nul.CharField(max_length=255, blank=True, default="")

    class Meta:
        ordering = ["source_kind", "source_value", "entry__tag"]
        constraints = [
            choice_check(
                "source_kind", CrosswalkSourceKind, "%(app_label)s_%(class)s_source_kind_valid"
            ),
            choice_check("origin", CrosswalkOrigin, "%(app_label)s_%(class)s_origin_valid"),
            models.UniqueConstraint(
                fields=["source_kind", "source_value", "entry"],
                name="%(app_label)s_%(class)s_unique_row",
            ),
            models.CheckConstraint(
                condition=~models.Q(source_value=""),
                name="%(app_label)s_%(class)s_source_required",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_kind} {self.source_value} → {self.entry_id}"


class CrosswalkLoad(models.Model):
    """One load of the shipped crosswalk data: which version, when, and what it changed.

    The newest row's ``version`` is the crosswalk version in force (shown on the dashboards
    and the findings pages).
    """

    version = nul.CharField(max_length=32)
    loaded_at = models.DateTimeField(default=timezone.now)
    reset = models.BooleanField(default=False, help_text="Admin edits were discarded.")
    added = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    removed = models.PositiveIntegerField(default=0)
    kept_edited = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-loaded_at", "-id"]
        get_latest_by = ["loaded_at", "id"]

    def __str__(self) -> str:
        return f"crosswalk {self.version} loaded {self.loaded_at:%Y-%m-%d %H:%M}"
