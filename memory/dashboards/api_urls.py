"""URLs of the statistics API (``/api/v1/stats/…``)."""

from django.urls import path

from memory.dashboards import api

urlpatterns = [
    path("summary", api.SummaryView.as_view(), name="api-stats-summary"),
    path("asr", api.AsrView.as_view(), name="api-stats-asr"),
    path("heatmap", api.HeatmapView.as_view(), name="api-stats-heatmap"),
    path("trend", api.TrendView.as_view(), name="api-stats-trend"),
    path("scorers", api.ScorersView.as_view(), name="api-stats-scorers"),
]
