"""URLs of the transfer pages: browser uploads of PyRIT databases (``/imports/``)."""

from django.urls import path

from memory.transfer.uploads import views

urlpatterns = [
    path("", views.import_list, name="import-list"),
    path("<uuid:job_id>/", views.import_detail, name="import-detail"),
    path("<uuid:job_id>/status/", views.import_status, name="import-status"),
]
