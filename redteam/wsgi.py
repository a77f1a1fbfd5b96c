"""WSGI entry point."""

import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "redteam.settings")
application = get_wsgi_application()

# Import the URLconf, and with it every view and the ingestion service, while the worker
# starts rather than in its first request: a fresh worker's first ingestion otherwise spent
# ~0.2 s of CPU importing modules (docs/performance.md).
get_resolver().url_patterns  # noqa: B018 - the attribute access performs the import
