"""Settings for Redline, driven by environment variables.

Production-safe by default (``DEBUG`` off, secure cookies, HSTS); the development default is
selected by ``DEBUG=1`` (what ``./dev.sh`` sets). Every value a deployment changes is read from
the environment through the small typed helpers below.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    """Return the environment variable ``name`` or ``default``."""
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    """Parse a boolean environment variable (1/true/yes/on, case-insensitive)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    """Parse an integer environment variable, failing loudly on garbage."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc


def env_list(name: str, default: list[str]) -> list[str]:
    """Parse a comma-separated environment variable into a list of non-empty items."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


VAR_DIR = Path(env_str("REDLINE_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _secret_key() -> str:
    """The key from ``SECRET_KEY``, else one generated once and kept in ``var/secret_key``.

    A generated, persisted key means a fresh checkout works without configuration while no
    two installations ever share a key that was committed somewhere.
    """
    key = env_str("SECRET_KEY")
    if key:
        return key
    key_file = VAR_DIR / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    key = secrets.token_urlsafe(50)
    key_file.write_text(key)
    key_file.chmod(0o600)
    return key


SECRET_KEY = _secret_key()
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_tasks_db",
    "simple_history",
    "axes",
    "memory",
    "seeds",
    "redteam",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "redteam.middleware.RejectNulMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last: it answers a locked-out login with its own page.
    "axes.middleware.AxesMiddleware",
]

# --- Logins: lockout after repeated failures (django-axes, docs/deployment.md) ---------------
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Django's ModelBackend, loading the user's preferences (theme) with the user.
    "redteam.auth_backends.PreferenceModelBackend",
]
AXES_ENABLED = env_bool("LOGIN_LOCKOUT", True)
# Failed attempts for one username from one address before that pair is locked out.
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15))
# Keyed on the pair: failures from one address never lock the user out from another.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# Reverse proxies (addresses or CIDR networks, comma-separated) whose X-Forwarded-For is
# believed; the client's address is the right-most entry that is not one of them
# (redteam/proxies.py). Empty: REMOTE_ADDR, the connection's peer, is the client.
REDLINE_TRUSTED_PROXIES = env_list("REDLINE_TRUSTED_PROXIES", [])
for _proxy in REDLINE_TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy, strict=False)
    except ValueError:
        raise ImproperlyConfigured(
            f"REDLINE_TRUSTED_PROXIES: {_proxy!r} is not an IP address or network"
        ) from None
AXES_CLIENT_IP_CALLABLE = "redteam.proxies.client_address"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

ROOT_URLCONF = "redteam.urls"
WSGI_APPLICATION = "redteam.wsgi.application"
ASGI_APPLICATION = "redteam.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
                "redteam.context.navigation",
                "redteam.context.theme",
            ],
        },
    },
    {
        # Fragments a page repeats thousands of times (the dashboard's tables and charts),
        # included with {% jinja_fragment %}: redteam/jinja.py says why.
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "NAME": "jinja2",
        "DIRS": [BASE_DIR / "templates" / "jinja2"],
        "APP_DIRS": False,
        "OPTIONS": {"environment": "redteam.jinja.environment"},
    },
]

# --- Database -------------------------------------------------------------------------------
# SQLite by default (a file under var/), PostgreSQL in production via DATABASE_URL.
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'redline.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Persistent connections (DATABASE_CONN_MAX_AGE, as for PostgreSQL): a new connection per
    # request parsed the whole schema again at its first query, started with a cold page
    # cache, and, being the last connection to close, checkpointed the WAL on the way out (~9 %
    # of an ingestion request). Between requests a connection holds no transaction, so it
    # does not hold checkpoints back. IMMEDIATE transactions take the write lock at BEGIN, so
    # two writers queue on the busy timeout instead of failing with "database is locked" when
    # a read lock upgrades.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = False
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": env_int("SQLITE_BUSY_TIMEOUT", 20),
        "init_command": (
            "PRAGMA journal_mode=WAL;"
            "PRAGMA synchronous=NORMAL;"
            "PRAGMA foreign_keys=ON;"
            "PRAGMA busy_timeout=20000;"
            "PRAGMA cache_size=-65536;"
            # Checkpoint the WAL every ~40 MB instead of every 4 MB: a 1,000-piece ingestion
            # writes more than 4 MB, so with the default every commit paid a checkpoint, and
            # index pages that each batch touches were copied back every time (commit: 23 → 16
            # ms per batch; docs/performance.md).
            "PRAGMA wal_autocheckpoint=10000;"
        ),
    }
    # A file, not :memory:, so multi-process tests share it; REDLINE_TEST_DB lets two test
    # runs on one checkout keep apart. With several test workers (pytest -n) each worker gets
    # its own file: pytest-django appends "_gw0", "_gw1", … to this name.
    DATABASES["default"]["TEST"] = {
        "NAME": env_str("REDLINE_TEST_DB", str(VAR_DIR / "test-redline.sqlite3"))
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# --- Background tasks -----------------------------------------------------------------------
# Browser uploads of PyRIT databases are imported by a worker (`manage.py db_worker`), never
# inside the request. The queue lives in the database, so no broker is needed.
TASKS = {
    "default": {
        "BACKEND": env_str("TASKS_BACKEND", "django_tasks_db.DatabaseBackend"),
        "QUEUES": ["default"],
    }
}

# --- Static and media -----------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))
# WhiteNoise scans STATIC_ROOT at start-up and warns when it is missing (before collectstatic).
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
STORAGES = {
    # Files appear complete or not at all (a full disk leaves no truncated blob).
    "default": {"BACKEND": "redteam.core.storage.AtomicFileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
# Uploaded media are served only by authenticated views, never by the web server directly.
FILE_UPLOAD_PERMISSIONS = 0o640

# --- Security -------------------------------------------------------------------------------
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
# Stored LLM output is rendered escaped or sanitised; this policy is the second wall: only our
# own scripts (and nonce-tagged admin scripts) run, nothing is framed, no plugins.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    # Inline style attributes carry data-driven widths (score bars, charts); no script.
    "style-src": [CSP.SELF, CSP.UNSAFE_INLINE],
    "img-src": [CSP.SELF, "data:", "blob:"],
    "media-src": [CSP.SELF, "blob:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    # Load balancers probe over plain HTTP.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
    CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
    if env_bool("SECURE_PROXY_SSL", False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# --- API ------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    # Bearer first: DRF takes the WWW-Authenticate header from the first class, so anonymous
    # requests get 401 (with a Bearer challenge) rather than 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "redteam.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "redteam.permissions.TokenScope",
        "redteam.permissions.ModelPermissions",
    ],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # JSON nested too deep is a 400 (redteam/parsers.py); forms as DRF's defaults.
    "DEFAULT_PARSER_CLASSES": [
        "redteam.parsers.JSONBodyParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "redteam.core.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    # Per API token, at REDLINE_API_RATE; over the rate: 429 with Retry-After.
    "DEFAULT_THROTTLE_CLASSES": ["redteam.throttling.TokenRateThrottle"],
    "EXCEPTION_HANDLER": "redteam.views.api_exception_handler",
}
# Requests per token (or signed-in user, or address) and period: "1200/minute", "50/second";
# empty turns the limit off (docs/deployment.md).
REDLINE_API_RATE = env_str("API_RATE", "1200/minute")
# Failed API authentications (a wrong, expired or revoked token) per client address and period;
# over it every token from that address is refused with 429 until the period has passed.
REDLINE_API_AUTH_FAILURE_RATE = env_str("API_AUTH_FAILURE_RATE", "30/minute")

# Where Redline is reached from outside, e.g. "https://redline.example.org": links in webhook
# payloads are made absolute with it (docs/webhooks.md); empty leaves them as paths.
REDLINE_BASE_URL = env_str("BASE_URL", "")
# Webhooks refuse loopback, private, link-local and other non-public addresses (checked when
# each request is sent); turn this on for a receiver inside your own network.
WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = env_bool("WEBHOOKS_ALLOW_PRIVATE_ADDRESSES", False)

# Evidence seals are HMAC-SHA256 under this key, kept outside the database (docs/findings.md,
# docs/deployment.md); unset, a key derived from SECRET_KEY is used (check redline.W001).
# Old keys stay listed (comma-separated) after a rotation so their seals still verify.
REDLINE_SEAL_KEY = env_str("REDLINE_SEAL_KEY", "")
REDLINE_SEAL_KEYS_OLD = env_list("REDLINE_SEAL_KEYS_OLD", [])

SPECTACULAR_SETTINGS = {
    "TITLE": "Redline API",
    "DESCRIPTION": "Ingest and read PyRIT red-team memory.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI from the vendored sidecar package: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "/favicon.ico",
    "REDOC_DIST": "SIDECAR",
    # One schema enum per PyRIT literal type, however many fields use it.
    "ENUM_NAME_OVERRIDES": {
        "PromptDataTypeEnum": "redteam.core.choices.PromptDataType",
        "ChatMessageRoleEnum": "redteam.core.choices.ChatMessageRole",
        # Fields of the same name with different choices in different endpoints.
        "ScoreStatusEnum": "redteam.core.choices.ScoreStatus",
        "FindingStatusEnum": "memory.models.findings.FindingStatus",
        "SeedGroupKindEnum": "seeds.choices.SeedGroupKind",
        "EvidenceKindEnum": "memory.models.findings.EvidenceKind",
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        # The security log: one JSON object a line (redteam.security).
        "security": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "message": "event"},
        },
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler"},
        "security": {"class": "logging.StreamHandler", "formatter": "security"},
    },
    "loggers": {
        # django-axes' own notes (e.g. "deleted 0 failed login attempts" on every login);
        # lockouts reach the security log.
        "axes": {"level": "WARNING"},
        "redline.security": {
            "handlers": ["security"],
            "level": env_str("SECURITY_LOG_LEVEL", "INFO"),
            "propagate": False,
        },
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

# --- Ingestion limits (docs/api.md) ---------------------------------------------------------
# Largest JSON body POST /api/v1/ingest/ accepts; 64 MiB holds 10,000 PyRIT 1.1.0 pieces.
REDLINE_INGEST_MAX_BODY_BYTES = env_int("INGEST_MAX_BODY_MB", 64) * 1024 * 1024
# Longest single string value (a prompt, a response, a traceback) in characters.
REDLINE_INGEST_MAX_TEXT_CHARS = env_int("INGEST_MAX_TEXT_CHARS", 8_000_000)
# Deepest nesting of objects and arrays in a payload (identifier trees are ~8 levels).
REDLINE_INGEST_MAX_DEPTH = env_int("INGEST_MAX_DEPTH", 48)
# Longest key of any JSON object in a batch (characters); a longer one refuses the batch.
REDLINE_INGEST_MAX_KEY_CHARS = env_int("INGEST_MAX_KEY_CHARS", 1024)
# Most items (conversations, messages, pieces, scores, attack results, seeds, …) per request:
# a batch over it is a 413. 50,000 keeps a request within gunicorn's timeout and a worker's
# memory (docs/deployment.md).
REDLINE_INGEST_MAX_ITEMS = env_int("INGEST_MAX_ITEMS", 50_000)
# Largest media file PUT /api/v1/media/ accepts.
REDLINE_MEDIA_MAX_BYTES = env_int("MEDIA_MAX_MB", 200) * 1024 * 1024
# Uploads above this size are spooled to a temporary file instead of memory.
# Browser imports of PyRIT databases (docs/upload.md): upload size and zip-bomb limits.
REDLINE_IMPORT_MAX_UPLOAD_BYTES = env_int("IMPORT_MAX_UPLOAD_MB", 2048) * 1024 * 1024
REDLINE_IMPORT_ZIP_MAX_TOTAL_BYTES = env_int("IMPORT_ZIP_MAX_TOTAL_MB", 8192) * 1024 * 1024
REDLINE_IMPORT_ZIP_MAX_MEMBER_BYTES = env_int("IMPORT_ZIP_MAX_MEMBER_MB", 4096) * 1024 * 1024
REDLINE_IMPORT_ZIP_MAX_MEMBERS = env_int("IMPORT_ZIP_MAX_MEMBERS", 50_000)
REDLINE_IMPORT_ZIP_MAX_RATIO = env_int("IMPORT_ZIP_MAX_RATIO", 200)
# A running import whose worker has not reported for this long is failed as stalled.
REDLINE_IMPORT_STALLED_AFTER_SECONDS = env_int("IMPORT_STALLED_AFTER_MINUTES", 15) * 60
# A starting worker (manage.py import_worker) queues again a running import whose worker has
# not reported for this long: its worker stopped.
REDLINE_IMPORT_ORPHANED_AFTER_SECONDS = env_int("IMPORT_ORPHANED_AFTER_SECONDS", 120)
FILE_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024

# Benchmarks only: report each response's SQL query count in an X-Query-Count header.
if env_bool("QUERY_COUNT_HEADER", False):
    MIDDLEWARE.insert(0, "redteam.middleware.QueryCountHeaderMiddleware")
