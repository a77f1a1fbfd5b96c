"""The transfer API under ``/api/v1/``: ingestion, media, export, and the read endpoints of
PyRIT memory (URL names ``api-<model>-list|detail``)."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from memory.transfer.api import views
from memory.transfer.exporters.views import ExportView
from memory.transfer.ingest.media_views import MediaDetailView, MediaUploadView
from memory.transfer.ingest.views import IngestLimitsView, IngestView

router = SimpleRouter()
router.register("conversations", views.ConversationViewSet, basename="api-conversation")
router.register("message-pieces", views.MessagePieceViewSet, basename="api-message-piece")
router.register("scores", views.ScoreViewSet, basename="api-score")
router.register("scorable-contents", views.ScorableContentViewSet, basename="api-scorable-content")
router.register("attack-results", views.AttackResultViewSet, basename="api-attack-result")
router.register("identifiers", views.ComponentIdentifierViewSet, basename="api-identifier")

urlpatterns = [
    path("ingest/", IngestView.as_view(), name="api-ingest"),
    path("ingest/limits/", IngestLimitsView.as_view(), name="api-ingest-limits"),
    path("media/", MediaUploadView.as_view(), name="api-media"),
    path("media/<str:sha256>/", MediaDetailView.as_view(), name="api-media-detail"),
    path("export/", ExportView.as_view(), name="api-export"),
    *router.urls,
]
