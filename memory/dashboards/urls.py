"""URLs of the dashboard pages."""

from django.urls import path

from memory.dashboards import views

urlpatterns = [
    path("", views.dashboard, name="dashboards"),
]
