"""API routes of operations, findings and reports (URL names ``api-<model>-list|detail``)."""

from rest_framework.routers import SimpleRouter

from memory.findings.api import views

router = SimpleRouter()
router.register("operations", views.OperationViewSet, basename="api-operation")
router.register("findings", views.FindingViewSet, basename="api-finding")
router.register("reports", views.ReportViewSet, basename="api-report")

urlpatterns = router.urls
