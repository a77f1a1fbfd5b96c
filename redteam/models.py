"""API tokens: how scripts and PyRIT automation authenticate to the REST API.

A token is shown once, when it is created, and only its SHA-256 hash is stored. See
``redteam.tokens`` for creating, revoking and checking tokens.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Length
from django.db.models.lookups import Exact
from django.utils import timezone


class ApiTokenScope(models.TextChoices):
    """What a token may do; its user's model permissions still apply on top."""

    READ = "read", "Read"
    #: Ingest tokens may also read: an uploader checks what is already stored.
    INGEST = "ingest", "Ingest and read"


class ApiTokenQuerySet(models.QuerySet):
    """Queries over API tokens."""

    def active(self) -> ApiTokenQuerySet:
        """Tokens that authenticate now: not revoked, not expired, of an active user."""
        return self.filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=timezone.now()),
            revoked_at__isnull=True,
            user__is_active=True,
        )


class Theme(models.TextChoices):
    """The colour scheme of the app and the admin, as a user chooses it."""

    SYSTEM = "system", "System (follow the device)"
    LIGHT = "light", "Light"
    DARK = "dark", "Dark"


class ApiToken(models.Model):
    """A bearer token for the REST API (``Authorization: Bearer <token>``), stored hashed.

    Tokens are 256-bit random strings (``secrets.token_urlsafe(32)``), so a plain SHA-256 is the
    right hash: salts and slow hashes (PBKDF2, Argon2) protect low-entropy passwords against
    dictionary attacks, and nobody can enumerate 2**256 candidates. An unsalted hash is also what
    lets a request find its token with one indexed lookup.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True, help_text="A label, e.g. the bot's host.")
    scope = models.CharField(
        max_length=16, choices=ApiTokenScope.choices, default=ApiTokenScope.READ
    )
    # revoke_api_token PREFIX, and the admin's search.
    key_prefix = models.CharField(
        max_length=8, db_index=True, editable=False, help_text="Identifies the token; not secret."
    )
    # Every authenticated API request: WHERE key_hash = sha256(token) (unique, so indexed).
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    #: Updated at most once a minute (see ``redteam.tokens.LAST_USED_RESOLUTION``).
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Exact(Length("key_hash"), 64),
                name="%(app_label)s_%(class)s_key_hash_is_sha256",
            ),
            models.CheckConstraint(
                condition=models.Q(scope__in=ApiTokenScope.values),
                name="%(app_label)s_%(class)s_scope_valid",
            ),
        ]
        ordering = ["-created_at"]
        verbose_name = "API token"

    def __str__(self) -> str:
        label = f" ({self.name})" if self.name else ""
        return f"{self.key_prefix}…{label}"

    @property
    def is_active(self) -> bool:
        """Whether the token itself is usable now (not revoked, not expired)."""
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()

    @property
    def can_write(self) -> bool:
        """Whether the scope allows unsafe methods (POST, PUT, PATCH, DELETE)."""
        return self.scope == ApiTokenScope.INGEST


class UserPreference(models.Model):
    """One user's display settings: the review pages' reviewer safety and the colour scheme."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference"
    )
    #: Blur images (and video) of pieces that carry harm categories until clicked.
    blur_harmful_media = models.BooleanField(default=True)
    #: Light, dark, or whatever the device prefers (``prefers-color-scheme``).
    theme = models.CharField(max_length=6, choices=Theme.choices, default=Theme.SYSTEM)
    #: The attack list's optional columns this user shows, in display order (``None``: the
    #: default set). Unknown keys are ignored when read.
    attack_columns = models.JSONField(null=True, blank=True, default=None)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(theme__in=Theme.values),
                name="%(app_label)s_%(class)s_theme_valid",
            )
        ]

    def __str__(self) -> str:
        return f"preferences of {self.user}"


class SavedView(models.Model):
    """A list or dashboard the way one user left it: its page and its query string, under a
    name. Opening it is following the link; the filters themselves are the page's."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_views"
    )
    #: The page's URL name (``attack-list``, ``conversation-list``, ``dashboards``…).
    page = models.CharField(max_length=64)
    name = models.CharField(max_length=120)
    query = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "page", "name"], name="%(app_label)s_%(class)s_unique_name"
            ),
            models.CheckConstraint(
                condition=~models.Q(name=""), name="%(app_label)s_%(class)s_name_required"
            ),
        ]
        indexes = [models.Index(fields=["user", "page"], name="redteam_savedview_user_page")]

    def __str__(self) -> str:
        return f"{self.name} ({self.page})"
