"""URLs of the export API (``/api/v1/export/``)."""

urlpatterns: list = []
