"""Read endpoints of seeds under ``/api/v1/`` (URL names ``api-<model>-list|detail``)."""

from rest_framework.routers import SimpleRouter

from seeds.api import views

router = SimpleRouter()
router.register("seed-datasets", views.SeedDatasetViewSet, basename="api-seed-dataset")
router.register("seeds", views.SeedViewSet, basename="api-seed")
router.register("seed-groups", views.SeedGroupViewSet, basename="api-seed-group")

urlpatterns = router.urls
