"""The REST API under ``/api/v1/``: ingestion, media and the read endpoints of each app."""

from django.urls import include, path

urlpatterns = [
    path("", include("memory.api.urls")),
    path("", include("seeds.api.urls")),
]
