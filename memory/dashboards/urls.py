"""URLs of the dashboard pages."""

from django.urls import path

from memory.dashboards import views

urlpatterns = [
    path("", views.dashboard, name="dashboards"),
    path("csv/<slug:table>.csv", views.dashboard_csv, name="dashboards-csv"),
    path("part/<slug:part>/", views.dashboard_part, name="dashboards-part"),
]
