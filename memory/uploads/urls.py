"""URLs of the upload pages."""

from django.urls import path

from memory.uploads import views

urlpatterns = [
    path("", views.import_list, name="import-list"),
]
