"""URLs of the statistics API (``/api/v1/stats/…``)."""

urlpatterns: list = []
