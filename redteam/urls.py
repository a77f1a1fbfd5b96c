"""Root URL configuration."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from redteam import views

admin.site.site_header = "Redline administration"
admin.site.site_title = "Redline"
admin.site.index_title = "Red-team memory and seeds"

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("dashboards/", include("memory.dashboards.urls")),
    path("imports/", include("memory.transfer.urls")),
    path("", include("memory.findings.urls")),
    path("api/v1/", include("redteam.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "api/docs/",
        login_required(SpectacularSwaggerSplitView.as_view(url_name="api-schema")),
        name="api-docs",
    ),
    path("", include("memory.review.urls")),
]

handler403 = "redteam.views.permission_denied"
handler404 = "redteam.views.page_not_found"
handler500 = "redteam.views.server_error"
