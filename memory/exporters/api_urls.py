"""URLs of the export API (``/api/v1/export/``)."""

from django.urls import path

from memory.exporters.api import ExportView

urlpatterns = [
    path("", ExportView.as_view(), name="api-export"),
]
