"""Read endpoints of PyRIT memory under ``/api/v1/`` (URL names ``api-<model>-list|detail``)."""

from rest_framework.routers import SimpleRouter

from memory.api import views

router = SimpleRouter()
router.register("conversations", views.ConversationViewSet, basename="api-conversation")
router.register("message-pieces", views.MessagePieceViewSet, basename="api-message-piece")
router.register("scores", views.ScoreViewSet, basename="api-score")
router.register("attack-results", views.AttackResultViewSet, basename="api-attack-result")
router.register("identifiers", views.ComponentIdentifierViewSet, basename="api-identifier")

urlpatterns = router.urls
