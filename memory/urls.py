"""URLs of the review pages: the lists, and the detail pages with human verdicts."""

from django.urls import include, path

urlpatterns = [
    path("", include("memory.views.lists_urls")),
    path("", include("memory.views.review_urls")),
]
