"""URLs of the attack and conversation pages and of human verdicts."""

urlpatterns: list = []
