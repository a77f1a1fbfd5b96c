"""The REST API under ``/api/v1/``: each capability's endpoints."""

from django.urls import include, path

urlpatterns = [
    path("stats/", include("memory.dashboards.api_urls")),
    path("", include("memory.transfer.api_urls")),
    path("", include("seeds.api.urls")),
    path("", include("memory.review.api_urls")),
    path("", include("memory.findings.api.urls")),
]
