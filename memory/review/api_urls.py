"""The review API under ``/api/v1/``: review queues (URL names ``api-review-queue-list|detail``)."""

from rest_framework.routers import SimpleRouter

from memory.review import api

router = SimpleRouter()
router.register("review-queues", api.ReviewQueueViewSet, basename="api-review-queue")

urlpatterns = router.urls
