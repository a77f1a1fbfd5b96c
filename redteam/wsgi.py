"""WSGI entry point."""

import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "redteam.settings")
application = get_wsgi_application()

# Import the URLconf, and with it every view and the ingestion service, while the worker
# starts rather than in its first request: a fresh worker's first ingestion otherwise spent
# ~0.2 s of CPU importing modules (docs/performance.md).
get_resolver().url_patterns  # noqa: B018 - the attribute access performs the import

# Everything made so far (modules, classes, settings, the URLconf) lives as long as the worker.
# Frozen, it is left out of the cyclic collector's full collections, which otherwise walked it
# all again every few thousand allocations: a fifth of the dashboard page's CPU
# (docs/performance.md → Dashboards).
gc.freeze()
