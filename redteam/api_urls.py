"""The REST API under ``/api/v1/``: ingestion, media and the read endpoints of each app."""

from django.urls import include, path

from memory.api.ingest import IngestView
from memory.api.media import MediaDetailView, MediaUploadView

urlpatterns = [
    path("ingest/", IngestView.as_view(), name="api-ingest"),
    path("media/", MediaUploadView.as_view(), name="api-media"),
    path("media/<str:sha256>/", MediaDetailView.as_view(), name="api-media-detail"),
    path("stats/", include("memory.dashboards.api_urls")),
    path("export/", include("memory.exporters.api_urls")),
    path("", include("memory.api.urls")),
    path("", include("seeds.api.urls")),
]
