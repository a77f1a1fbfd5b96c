"""Read endpoints (router)."""

urlpatterns: list = []
